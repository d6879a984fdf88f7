#!/usr/bin/env bash
# Build AMD's HIP-Basic examples (ROCm/rocm-examples) with Debian's hipcc for gfx90a and run
# each on hipshim, and, as the reference, under AMD's own libamdhip64.so.5 on the same
# hsasim. Prints one row per example: its result on each runtime and the seconds it took.
#
#   git clone https://github.com/ROCm/rocm-examples /tmp/rocm-examples
#   scripts/amd-examples.sh /tmp/rocm-examples [EXAMPLE...]
#
# The examples' code stays in their checkout: this script only builds and runs it. Needs a
# release build (`cargo build --release --workspace`) and scripts/setup.sh's packages.
# Not part of CI: several examples take minutes on the software GPU.
#
# An example passes when it exits 0 and does not print that it skipped its work (e.g.
# cooperative_groups prints "Skipping" when the device reports no cooperative launch,
# texture_management that textures are not supported). multi_gpu_data_transfer runs with two
# simulated GPUs (HSASIM_GPUS=2).
# Env: EXAMPLE_TIMEOUT (seconds per run, default 300), AMD_REFERENCE=0 skips AMD's runtime.
set -uo pipefail

if [[ $# -lt 1 || ! -d "$1/HIP-Basic" ]]; then
    echo "usage: $0 ROCM_EXAMPLES_DIR [EXAMPLE...]" >&2
    exit 2
fi
examples_dir="$(cd "$1" && pwd)"
shift
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lib_dir="$("$repo/scripts/stage-libs.sh" release)" || exit 1
work="${CARGO_TARGET_DIR:-$repo/target}/amd-examples"
# AMD's libamdhip64.so.5 (from the system's library path) over hsasim standing in for ROCr.
amd_dir="$work/as-rocr"
mkdir -p "$amd_dir"
ln -sfn "$lib_dir/libhsasim.so" "$amd_dir/libhsa-runtime64.so.1"
limit="${EXAMPLE_TIMEOUT:-300}"

# Examples that need what this machine cannot give: another compiler pipeline step
# (assembly, LLVM IR, static libraries), CUDA, graphics interop, or a second GPU.
skip_reason() {
    case "$1" in
    assembly_to_executable | llvm_ir_to_executable | static_device_library | \
        static_host_library) echo "needs its own multi-step build" ;;
    hello_world_cuda) echo "CUDA source" ;;
    hipify) echo "no program" ;;
    opengl_interop | vulkan_interop) echo "graphics interop" ;;
    *) return 1 ;;
    esac
}

if [[ $# -gt 0 ]]; then
    names=("$@")
else
    names=()
    for d in "$examples_dir"/HIP-Basic/*/; do names+=("$(basename "$d")"); done
fi

# run LABEL BINARY LIBDIR: runs one example, prints "pass"/"FAIL (why)" and the seconds.
run() {
    local log="$work/$1.log" start end rc
    start=$(date +%s.%N)
    local gpus=1
    [[ "$1" == multi_gpu_data_transfer.* ]] && gpus=2
    (cd "$work" && HSASIM_GPUS=$gpus HSASIM_GFX=gfx90a LD_LIBRARY_PATH="$3" \
        timeout "$limit" "$2") >"$log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    local secs
    secs=$(printf '%.1f' "$(echo "$end - $start" | bc)")
    if [[ $rc -eq 124 ]]; then
        echo "FAIL(timeout) ${secs}s"
    elif [[ $rc -ne 0 ]]; then
        echo "FAIL(exit $rc) ${secs}s"
    elif grep -qiE "skipping|requires at least|not supported on device" "$log"; then
        echo "FAIL(skipped) ${secs}s"
    else
        echo "pass ${secs}s"
    fi
}

printf '%-26s %-22s %-22s\n' example hipshim "AMD's runtime"
passed=0 total=0
for name in "${names[@]}"; do
    src="$examples_dir/HIP-Basic/$name"
    if why=$(skip_reason "$name"); then
        printf '%-26s skipped: %s\n' "$name" "$why"
        continue
    fi
    bin="$work/$name"
    sources=("$src"/main.hip "$src"/main.cpp)
    main=""
    for s in "${sources[@]}"; do [[ -f "$s" ]] && main="$s"; done
    if [[ -z "$main" ]]; then
        printf '%-26s skipped: no main source\n' "$name"
        continue
    fi
    # module_api loads a code object it builds from module.hip at run time from its cwd.
    if [[ -f "$src/module.hip" ]]; then
        HIP_PLATFORM=amd HIP_PATH=/usr ROCM_PATH=/usr hipcc --offload-arch=gfx90a \
            --genco "$src/module.hip" -o "$work/module.co" >"$work/$name.build.log" 2>&1
    fi
    if ! HIP_PLATFORM=amd HIP_PATH=/usr ROCM_PATH=/usr hipcc --offload-arch=gfx90a -std=c++17 \
        -I "$examples_dir/Common" "$main" -o "$bin" >>"$work/$name.build.log" 2>&1; then
        printf '%-26s does not build with Debian hipcc (%s)\n' "$name" "$work/$name.build.log"
        continue
    fi
    ours=$(run "$name.hipshim" "$bin" "$lib_dir")
    if [[ "${AMD_REFERENCE:-1}" == 1 ]]; then
        theirs=$(run "$name.amd" "$bin" "$amd_dir")
    else
        theirs="-"
    fi
    printf '%-26s %-22s %-22s\n' "$name" "$ours" "$theirs"
    total=$((total + 1))
    [[ "$ours" == pass* ]] && passed=$((passed + 1))
done
echo "hipshim: $passed of $total examples pass (logs in $work)"
