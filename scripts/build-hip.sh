#!/usr/bin/env bash
# Build a HIP program with a stock clang against hipshim's headers, linked to
# hipshim: the one place that knows the flags (scripts/demo.sh and
# tests/c_tests.rs both use it).
#
# Usage: scripts/build-hip.sh SOURCE OUTPUT [ARCH...]
#   ARCH: offload targets, default "gfx942 gfx90a" (one fat binary with a code
#   object for each).
# Env:   CARGO_TARGET_DIR (default <repo>/target), HIPSHIM_PROFILE (default
#   debug): where the built libamdhip64.so/libhsasim.so are; CLANGXX (default
#   clang++-19), HIP_BUILD_FLAGS (more flags, split on spaces, after the others:
#   an MPI program's `mpicxx --showme:compile` and `--showme:link`).
# The program gets NEEDED libamdhip64.so.6 and an rpath to the staged lib dir,
# so it runs on hipshim with no environment.
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 SOURCE OUTPUT [ARCH...]" >&2
    exit 2
fi
source_file="$1"
output="$2"
shift 2
archs=("$@")
[[ ${#archs[@]} -gt 0 ]] || archs=(gfx942 gfx90a)

scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$scripts")"
clangxx="${CLANGXX:-clang++-19}"
lib_dir="$("$scripts/stage-libs.sh" "${HIPSHIM_PROFILE:-debug}")"
devlibs="$("$scripts/hip-devlibs.sh")"

cmd=("$clangxx" -x hip)
for arch in "${archs[@]}"; do
    cmd+=("--offload-arch=$arch")
done
# -O3: device code is otherwise built at -O0. -nogpuinc: no ROCm headers (ours
# instead). -no-hip-rt: we link the runtime ourselves. Code object v5 is
# clang-19's default; say so, since the runtime must fill v5 hidden args.
cmd+=(-O3 -nogpuinc -no-hip-rt -mcode-object-version=5 -Wall
    "--rocm-device-lib-path=$devlibs" "-I$repo/hip_headers"
    "$source_file"
    "-L$lib_dir" -lamdhip64 "-Wl,-rpath,$lib_dir"
    -o "$output")
if [[ -n "${HIP_BUILD_FLAGS:-}" ]]; then
    read -r -a extra <<<"$HIP_BUILD_FLAGS"
    cmd+=("${extra[@]}")
fi

echo "+ ${cmd[*]}" >&2
mkdir -p "$(dirname "$output")"
"${cmd[@]}"
