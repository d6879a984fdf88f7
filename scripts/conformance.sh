#!/usr/bin/env bash
# AMD's conformance suite (hip-tests, Catch2) on hipshim: builds the chosen areas of a
# hip-tests checkout for each target and runs every case on its own, with a timeout, on
# hipshim over hsasim (or, with --runtime amd, on AMD's own libamdhip64.so.5 over hsasim, the
# reference). Prints pass/fail per area and the failing cases; not part of CI (too slow).
#
# Get the suite (never copy its code into this repository):
#   git clone --depth 1 --branch rocm-5.4.0 https://github.com/ROCm/hip-tests
# The areas module, p2p and cooperativeGrps exist (and build) only at rocm-6.x tags, against
# that release's HIP headers, which the host's ROCm 5.2 lacks; get the three at one tag:
#   git clone --depth 1 --branch rocm-6.2.0 https://github.com/ROCm/hip-tests hip-tests-6.2
#   git clone --depth 1 --branch rocm-6.2.0 https://github.com/ROCm/HIP hip-6.2
#   git clone --depth 1 --branch rocm-6.2.0 https://github.com/ROCm/clr clr-6.2
#   scripts/conformance.sh --rocm6 hip-6.2 clr-6.2 --areas module,p2p,cooperativeGrps hip-tests-6.2
#
# Usage: scripts/conformance.sh [OPTIONS] HIP_TESTS_DIR
#   --areas LIST     comma-separated catch/unit areas (default: the issue's list; areas the
#                    checkout lacks are reported and skipped)
#   --targets LIST   gfx90a (Debian's hipcc, AMD's headers: the "existing binary" case)
#                    and/or gfx942 (clang++-19 with AMD's installed headers); default both
#   --runtime NAME   hipshim (default) or amd (gfx90a only, not with --rocm6: AMD's ROCm 5.2
#                    runtime lacks ROCm 6's symbols)
#   --jobs N         compile jobs (default: nproc)
#   --run-jobs N     cases run at once (default 1; raise it on a many-core host)
#   --timeout S      seconds per case (default 120)
#   --cases REGEX    run only the cases whose name matches (grep -E)
#   --out DIR        build and result directory (default: target/conformance)
#   --lib DIR        the library directory to run on (default: the staged release build;
#                    for --runtime amd, its as-rocr directory), e.g. copies on another host
#   --build-only / --run-only
#   --rocm6 HIP_DIR CLR_DIR
#                    build a rocm-6.x suite against the HIP headers of those checkouts of the
#                    same tag (HIP's include/hip and clr's hipamd/include/hip/amd_detail, with a
#                    hip_version.h made from HIP's VERSION) with clang++-19 for both targets,
#                    linked to hipshim's libamdhip64.so.6 (AMD's ROCm 6 soname) and libhiprtc;
#                    --out defaults to target/conformance-rocm6 (give the same --rocm6 or --out
#                    to --run-only). The module area's code objects (--genco) are built too.
#   --gpus N         hsasim's GPU count (HSASIM_GPUS) for every case; by default 2 for the
#                    areas p2p, module and cooperativeGrps (their peer and multi-device cases
#                    need a second GPU; they skip on one) and hsasim's default (1) otherwise
# Needs a release build (`cargo build --release --workspace`) for hipshim's libraries.
# Results: OUT/results/RUNTIME-TARGET/AREA.cases (one "PASS|FAIL|TIMEOUT|CRASH name" line per
# case), OUT/results/RUNTIME-TARGET/logs/ (each failing case's output) and the table on stdout
# (also OUT/results/RUNTIME-TARGET/summary.txt).
set -euo pipefail

scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$scripts")"
areas="memory,stream,event,kernel,device,graph,module,printf,cooperativeGrps,multiThread,p2p,streamperthread,occupancy"
targets="gfx90a,gfx942"
runtime=hipshim
jobs="$(nproc)"
run_jobs=1
timeout_s=120
case_filter=""
out="${CARGO_TARGET_DIR:-$repo/target}/conformance"
build=1
run=1
suite=""
lib_override=""
rocm6_hip=""
rocm6_clr=""
gpus=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --areas) areas="$2"; shift 2 ;;
        --targets) targets="$2"; shift 2 ;;
        --runtime) runtime="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --run-jobs) run_jobs="$2"; shift 2 ;;
        --timeout) timeout_s="$2"; shift 2 ;;
        --cases) case_filter="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --lib) lib_override="$2"; shift 2 ;;
        --build-only) run=0; shift ;;
        --run-only) build=0; shift ;;
        --rocm6) rocm6_hip="$2"; rocm6_clr="$3"; shift 3 ;;
        --gpus) gpus="$2"; shift 2 ;;
        -h|--help) sed -n '2,45p' "$0"; exit 0 ;;
        -*) echo "conformance: unknown option $1" >&2; exit 2 ;;
        *) suite="$1"; shift ;;
    esac
done
if [[ $build == 1 && ( -z "$suite" || ! -d "$suite/catch/unit" ) ]]; then
    echo "conformance: give a hip-tests checkout (a directory with catch/unit); see --help" >&2
    exit 2
fi
[[ -n "$suite" && -d "$suite" ]] && suite="$(cd "$suite" && pwd)"
case "$runtime" in
    hipshim|amd) ;;
    *) echo "conformance: --runtime is hipshim or amd" >&2; exit 2 ;;
esac
if [[ -n "$rocm6_hip" ]]; then
    [[ $runtime == hipshim ]] || { echo "conformance: --rocm6 runs on hipshim only" >&2; exit 2; }
    # One default result tree per header set: the ROCm 6 build's main objects differ.
    [[ "$out" == "${CARGO_TARGET_DIR:-$repo/target}/conformance" ]] && out="${out}-rocm6"
    if [[ $build == 1 && ( ! -f "$rocm6_hip/include/hip/hip_runtime.h" ||
        ! -d "$rocm6_clr/hipamd/include/hip/amd_detail" ) ]]; then
        echo "conformance: --rocm6 takes a HIP and a clr checkout (see --help)" >&2
        exit 2
    fi
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

catch="$suite/catch"
export catch
# The ROCm 5.2 stack Debian installs, for both compilers.
export HIP_PLATFORM=amd HIP_PATH=/usr ROCM_PATH=/usr

# rocm6_headers DIR: the include tree a ROCm 6 install has, from the HIP and clr checkouts
# (links, not copies), with the hip_version.h AMD's build generates and a stand-in for the
# one device-library function ROCm 6's headers call that ROCm 5.2's ockl.bc lacks.
rocm6_headers() {
    local dir="$1/hip"
    rm -rf "$dir"
    mkdir -p "$dir"
    ln -s "$(cd "$rocm6_hip/include/hip" && pwd)"/* "$dir/"
    ln -sfn "$(cd "$rocm6_clr/hipamd/include/hip/amd_detail" && pwd)" "$dir/amd_detail"
    local major minor patch
    major="$(sed -n '/HIP_VERSION_MAJOR/{n;p}' "$rocm6_hip/VERSION")"
    minor="$(sed -n '/HIP_VERSION_MINOR/{n;p}' "$rocm6_hip/VERSION")"
    patch="$(sed -n '/HIP_VERSION_PATCH/{n;p}' "$rocm6_hip/VERSION")"
    cat > "$dir/hip_version.h" <<VERSION
#pragma once
#define HIP_VERSION_MAJOR $major
#define HIP_VERSION_MINOR $minor
#define HIP_VERSION_PATCH $patch
#define HIP_VERSION_GITHASH ""
#define HIP_VERSION_BUILD_ID 0
#define HIP_VERSION_BUILD_NAME ""
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)
VERSION
    # wall_clock64() calls __ockl_steadyctr_u64, new in ROCm 6's ockl; on gfx9 it reads
    # s_memrealtime (the 100 MHz constant clock), as this does.
    cat > "$1/rocm52_devlibs_compat.h" <<'COMPAT'
#pragma once
extern "C" __attribute__((device, weak)) unsigned long long __ockl_steadyctr_u64() {
    return __builtin_amdgcn_s_memrealtime();
}
COMPAT
}

# The flags clang++-19 compiles HIP with against the ROCm 6 header tree.
rocm6_flags() {
    echo -nogpuinc -isystem "$rocm6_include" -include __clang_hip_runtime_wrapper.h \
        -include "$rocm6_include/rocm52_devlibs_compat.h" "--rocm-device-lib-path=$devlibs" \
        -D__HIP_PLATFORM_AMD__
}

# compile TARGET SOURCE OBJECT: one translation unit of the suite for TARGET.
compile() {
    local target="$1" source="$2" object="$3"
    local includes=(-I "$catch/include" -I "$catch/kernels" -I "$catch/external/Catch2"
        -I "$catch/external/picojson")
    if [[ -n "$rocm6_include" ]]; then
        # shellcheck disable=SC2046
        clang++-19 -x hip "--offload-arch=$target" $(rocm6_flags) -std=c++17 -O1 -w \
            "${includes[@]}" -c "$source" -o "$object"
        return
    fi
    case "$target" in
        gfx90a)
            hipcc --offload-arch=gfx90a -std=c++17 -O1 -w "${includes[@]}" -c "$source" -o "$object" ;;
        gfx942)
            clang++-19 -x hip --offload-arch=gfx942 -mcode-object-version=5 --rocm-path=/usr \
                "--rocm-device-lib-path=$devlibs" -D__HIP_PLATFORM_AMD__ -std=c++17 -O1 -w \
                "${includes[@]}" -c "$source" -o "$object" ;;
    esac
}

# link TARGET OUTPUT OBJECT...: an executable linked to libamdhip64.so.5, as AMD's build
# makes it (hipshim then stands in for that library by LD_LIBRARY_PATH).
link() {
    local target="$1" output="$2"
    shift 2
    if [[ -n "$rocm6_include" ]]; then
        clang++-19 --hip-link "--offload-arch=$target" "$@" -o "$output" -L "$rocm6_libdir" \
            -lamdhip64 -lstdc++fs -lpthread
        return
    fi
    case "$target" in
        gfx90a) hipcc --offload-arch=gfx90a "$@" -o "$output" -lstdc++fs -lpthread ;;
        gfx942)
            clang++-19 --hip-link --offload-arch=gfx942 --rocm-path=/usr "$@" -o "$output" \
                -L/usr/lib/x86_64-linux-gnu -lamdhip64 -lstdc++fs -lpthread ;;
    esac
}

# area_code_objects AREA: the code objects its cases load from files, as its CMakeLists.txt
# makes them with custom commands: one "genco|asm OUTPUT SOURCE FLAG..." line each (genco: a
# device-only code object, as hipcc --genco makes; asm: the device assembly of -S). FLAGs are
# the command's -mcode-object-version and -mllvm options.
area_code_objects() {
    awk '
        function emit(block,   n, t, i, mode, output, source, flags) {
            n = split(block, t, /[ \t]+/)
            mode = ""; output = ""; source = ""; flags = ""
            for (i = 1; i <= n; i++) {
                if (t[i] == "--genco") mode = "genco"
                else if (t[i] == "-S") mode = "asm"
                else if (t[i] == "-o") output = t[i + 1]
                else if (t[i] ~ /\.cc$/) source = t[i]
                else if (t[i] ~ /^-mcode-object-version=/) flags = flags " " t[i]
                else if (t[i] == "-mllvm") flags = flags " -mllvm " t[i + 1]
            }
            sub(/.*\//, "", output); sub(/.*\//, "", source)
            if (mode != "" && output != "" && source != "") print mode, output, source flags
        }
        /add_custom_(command|target) *\(/ { block = ""; open = 1 }
        open { block = block " " $0; if ($0 ~ /\) *$/) { open = 0; emit(block) } }
    ' "$catch/unit/$1/CMakeLists.txt" 2>/dev/null | sort -u
}

# area_sources AREA: the area's AMD/Linux test sources, from its CMakeLists.txt (sources of
# blocks for the nvidia platform or Windows only, those of helper executables and of code
# objects are left out).
area_sources() {
    local helpers
    helpers="$(area_helpers "$1" | awk '{print $2}'; area_code_objects "$1" | awk '{print $3}')"
    awk '
        /if *\(HIP_PLATFORM MATCHES "nvidia"\)|elseif *\(HIP_PLATFORM MATCHES "nvidia"\)|if *\(WIN32\)/ { skip = 1; next }
        /elseif|else *\(|endif/ { skip = 0 }
        !skip {
            while (match($0, /[A-Za-z0-9_]+\.cc/)) {
                print substr($0, RSTART, RLENGTH)
                $0 = substr($0, RSTART + RLENGTH)
            }
        }' "$catch/unit/$1/CMakeLists.txt" | sort -u | grep -vxF -e "${helpers:-/}" || true
}

# area_helpers AREA: executables a case starts (add_executable(NAME ... SOURCE.cc)).
area_helpers() {
    grep -o 'add_executable( *[A-Za-z0-9_]* [^)]*\.cc' "$catch/unit/$1/CMakeLists.txt" 2>/dev/null |
        sed -E 's/add_executable\( *([A-Za-z0-9_]+) .* ([A-Za-z0-9_]+\.cc)$/\1 \2/' || true
}

area_libs() {
    case "$1" in
        rtc|module) echo "-lhiprtc" ;;
    esac
}

IFS=, read -r -a area_list <<< "$areas"
IFS=, read -r -a target_list <<< "$targets"
present=()
for area in "${area_list[@]}"; do
    # A run without the suite (--run-only on another host) takes the areas that were built.
    if [[ -f "$catch/unit/$area/CMakeLists.txt" ]] ||
        { [[ $build == 0 ]] && compgen -G "$out/build/*/$area/$area.test" >/dev/null; }; then
        present+=("$area")
    else
        echo "conformance: this checkout has no catch/unit/$area: skipped" >&2
    fi
done

if [[ $build == 1 ]]; then
    devlibs="$("$scripts/hip-devlibs.sh")"
    rocm6_include=""
    if [[ -n "$rocm6_hip" ]]; then
        rocm6_include="$out/include"
        rocm6_headers "$rocm6_include"
        # AMD's build links libamdhip64.so.6 and libhiprtc.so.6; hipshim's answer to both.
        rocm6_libdir="${lib_override:-$("$scripts/stage-libs.sh" release)}"
        [[ -f "$rocm6_libdir/libamdhip64.so" ]] || {
            echo "conformance: --rocm6 links to hipshim: run cargo build --release --workspace first" >&2
            exit 1
        }
    fi
    export -f compile rocm6_flags
    export devlibs rocm6_include
    for target in "${target_list[@]}"; do
        bdir="$out/build/$target"
        mkdir -p "$bdir/main"
        # The test main, and the suite's shared kernels (catch/kernels/*.cpp) every area links.
        common=()
        for src in "$catch/hipTestMain/main.cc" "$catch/hipTestMain/hip_test_context.cc" \
            "$catch/hipTestMain/hip_test_features.cc" "$catch"/kernels/*.cpp; do
            [[ -f "$src" ]] || continue
            obj="$bdir/main/$(basename "${src%.*}").o"
            [[ -f "$obj" ]] || compile "$target" "$src" "$obj"
            common+=("$obj")
        done
        for area in "${present[@]}"; do
            mkdir -p "$bdir/$area"
            # Each translation unit on its own, so one that does not compile (an API the
            # installed headers lack) costs only its own cases.
            area_sources "$area" | while read -r src; do
                [[ -f "$catch/unit/$area/$src" ]] || continue
                obj="$bdir/$area/${src%.cc}.o"
                [[ -f "$obj" && "$obj" -nt "$catch/unit/$area/$src" ]] && continue
                printf '%s\0%s\0%s\0' "$target" "$catch/unit/$area/$src" "$obj"
            done | xargs -0 -r -n 3 -P "$jobs" bash -c \
                'compile "$0" "$1" "$2" 2> "${2%.o}.err" || { echo "conformance: $0: $1 does not compile (${2%.o}.err)" >&2; rm -f "$2"; }'
            objects=()
            while read -r src; do
                obj="$bdir/$area/${src%.cc}.o"
                [[ -f "$obj" ]] && objects+=("$obj")
            done < <(area_sources "$area")
            if [[ ${#objects[@]} -eq 0 ]]; then
                echo "conformance: $target/$area: nothing compiled" >&2
                continue
            fi
            # shellcheck disable=SC2046
            link "$target" "$bdir/$area/$area.test" "${common[@]}" \
                "${objects[@]}" $(area_libs "$area") 2> "$bdir/$area/link.err" ||
                echo "conformance: $target/$area: link failed ($bdir/$area/link.err)" >&2
            # Data files the cases open by name (module: not_a_module.txt), as AMD's build
            # copies them beside the executable.
            for data in "$catch/unit/$area"/*.txt; do
                if [[ -f "$data" && "$(basename "$data")" != CMakeLists.txt ]]; then
                    cp -f "$data" "$bdir/$area/"
                fi
            done
            # Code objects the cases load by file name, beside the executable (its cases run
            # in its directory).
            area_code_objects "$area" | while read -r mode name src flags; do
                if [[ -z "$rocm6_include" ]]; then
                    echo "conformance: $target/$area: code object $name is built with --rocm6 only" >&2
                    continue
                fi
                code_object="$bdir/$area/$name"
                [[ -f "$code_object" && "$code_object" -nt "$catch/unit/$area/$src" ]] && continue
                case "$mode" in genco) only=() ;; asm) only=(-S) ;; esac
                # shellcheck disable=SC2046,SC2086
                clang++-19 -x hip "--offload-arch=$target" $(rocm6_flags) -std=c++17 \
                    --cuda-device-only "${only[@]}" $flags -I "$catch/include" \
                    "$catch/unit/$area/$src" -o "$code_object" 2> "$code_object.err" ||
                    echo "conformance: $target/$area: code object $name failed ($code_object.err)" >&2
            done
            area_helpers "$area" | while read -r name src; do
                compile "$target" "$catch/unit/$area/$src" "$bdir/$area/$name.helper.o" 2> "$bdir/$area/$name.err" &&
                    link "$target" "$bdir/$area/$name" "$bdir/$area/$name.helper.o" 2>> "$bdir/$area/$name.err" ||
                    echo "conformance: $target/$area: helper $name failed" >&2
            done
        done
    done
fi

[[ $run == 1 ]] || exit 0

case "$runtime" in
    hipshim)
        libdir="${lib_override:-$("$scripts/stage-libs.sh" release)}"
        run_env=(LD_LIBRARY_PATH="$libdir" HIPSHIM_DEVICE=sim)
        ;;
    amd)
        # AMD's runtime finds hsasim as its libhsa-runtime64.so.1 (docs/guide/hsasim.md: "hsasim under AMD's
        # own software").
        libdir="${lib_override:-$("$scripts/stage-libs.sh" release)/as-rocr}"
        run_env=(LD_LIBRARY_PATH="$libdir")
        ;;
esac
if [[ ! -d "$libdir" ]]; then
    echo "conformance: no $libdir: run cargo build --release --workspace first" >&2
    exit 1
fi

# run_case BINARY RESULT_DIR NAME: one case on its own, with its output kept if it fails.
run_case() {
    local binary="$1" results="$2" name="$3" status verdict
    local -a run_env
    eval "run_env=($RUN_ENV)"
    # Catch2's test-spec syntax: escape the characters it would read as operators.
    local spec
    spec="$(printf '%s' "$name" | sed -e 's/[][\\,*]/\\&/g')"
    local log
    log="$results/logs/$(printf '%s' "$name" | tr -c 'A-Za-z0-9_.-' '_').log"
    set +e
    (cd "$(dirname "$binary")" && env "${run_env[@]}" timeout -k 5 "$timeout_s" "$binary" "$spec") > "$log" 2>&1
    status=$?
    set -e
    if [[ $status == 0 ]] && ! grep -q "No tests ran" "$log"; then
        verdict=PASS
        rm -f "$log"
    elif [[ $status == 124 || $status == 137 ]]; then
        verdict=TIMEOUT
    # Catch2 exits with the number of failed assertions (at most 255), so a status over 128
    # is a signal only if Catch2 reported one or never got to its summary.
    elif [[ $status -ge 128 ]] && { grep -q "fatal error condition" "$log" ||
        ! grep -q "^test cases:" "$log"; }; then
        verdict=CRASH
    else
        verdict=FAIL
    fi
    printf '%s %s\n' "$verdict" "$name"
}
export -f run_case
export timeout_s

summary_rows=()
total_pass=0
total_cases=0
for target in "${target_list[@]}"; do
    if [[ $runtime == amd && $target != gfx90a ]]; then
        echo "conformance: AMD's runtime runs gfx90a only (its ROCm 5.2 code object loader): $target skipped" >&2
        continue
    fi
    # hsasim models the GPU the binary was built for.
    target_env=("${run_env[@]}" HSASIM_GFX="$target")
    results="$out/results/$runtime-$target"
    rm -rf "$results"
    mkdir -p "$results/logs"
    for area in "${present[@]}"; do
        binary="$out/build/$target/$area/$area.test"
        if [[ ! -x "$binary" ]]; then
            summary_rows+=("$(printf '%-8s %-16s %s' "$target" "$area" "not built")")
            continue
        fi
        area_env=("${target_env[@]}")
        area_gpus="$gpus"
        case "$area" in
            p2p|module|cooperativeGrps) area_gpus="${gpus:-2}" ;;
        esac
        [[ -z "$area_gpus" ]] || area_env+=(HSASIM_GPUS="$area_gpus")
        RUN_ENV="$(printf '%q ' "${area_env[@]}")"
        export RUN_ENV
        # Catch2 exits with the number of cases it listed. In the binary's directory, as
        # its cases run: some static initialisers load code objects from there.
        names="$( (cd "$(dirname "$binary")" && env "${area_env[@]}" "$binary" --list-test-names-only 2>/dev/null || true) |
            sed -e '/^$/d' -e '/test cases*$/d' -e 's/^ *//')"
        if [[ -n "$case_filter" ]]; then
            names="$(grep -E -- "$case_filter" <<< "$names" || true)"
        fi
        [[ -n "$names" ]] || continue
        # Each case in its own process: one that crashes or hangs costs only itself.
        while IFS= read -r name; do
            printf '%s\0' "$name"
        done <<< "$names" |
            xargs -0 -r -n 1 -P "$run_jobs" bash -c 'run_case "$1" "$2" "$3"' _ "$binary" "$results" \
                > "$results/$area.unsorted" 2>/dev/null || true
        sort -k2 "$results/$area.unsorted" > "$results/$area.cases"
        rm -f "$results/$area.unsorted"
        pass=$(grep -c '^PASS ' "$results/$area.cases" || true)
        cases=$(wc -l < "$results/$area.cases")
        total_pass=$((total_pass + pass))
        total_cases=$((total_cases + cases))
        summary_rows+=("$(printf '%-8s %-16s %4d / %-4d' "$target" "$area" "$pass" "$cases")")
    done
    {
        echo "hip-tests $(git -C "${suite:-.}" describe --tags 2>/dev/null || basename "${suite:-hip-tests}") on $runtime, $target"
        for row in "${summary_rows[@]}"; do echo "$row"; done
        echo "all: $total_pass / $total_cases passed"
        echo "failing cases:"
        cat "$results"/*.cases 2>/dev/null | grep -v '^PASS ' | sed 's/^/  /' || true
    } | tee "$results/summary.txt"
    summary_rows=()
    total_pass=0
    total_cases=0
done
