#!/usr/bin/env bash
# rocPRIM's own test suite (googletest programs) as a conformance suite for hsasim's
# interpreter: builds the chosen test programs of a rocPRIM test tree against the rocPRIM
# headers Debian installs (librocprim-dev 5.3.3, rocPRIM 2.10.9) for each target, runs each
# program on hipshim over hsasim with a timeout, and prints pass/fail per program and the
# failing cases. Scans, sorts, reductions, histograms and the lookback scans with
# device-scope atomics run real rocPRIM kernels. Not part of CI (too slow).
#
# Get the tests (the tag matching the installed headers; never copy them into this
# repository):
#   git clone --depth 1 --branch rocm-5.3.3 https://github.com/ROCm/rocPRIM /tmp/rocprim-src
#
# Usage: scripts/rocprim-conformance.sh [OPTIONS] ROCPRIM_SRC_DIR
#   --tests LIST     comma-separated programs, with or without the test_ prefix (default:
#                    block_reduce,warp_scan,device_reduce,device_scan,device_radix_sort,
#                    device_histogram,block_radix_sort); "all" takes every
#                    test/rocprim/test_*.cpp(.in)
#   --targets LIST   gfx90a (Debian's hipcc: the "existing binary" case) and/or gfx942
#                    (clang++-19 with AMD's installed headers); default both
#   --jobs N         compile jobs (default 1: these templates take minutes and GBs each)
#   --run-jobs N     programs run at once (default 1)
#   --timeout S      seconds per program run (default 900); the case running when a run
#                    crashes, exits (HIP_CHECK) or times out is recorded and the program
#                    starts again after it (a program slower than S loses one case to
#                    TIMEOUT per S seconds: raise S for device_scan/device_histogram)
#   --filter F       a googletest filter (--gtest_filter) for every program; the cases in
#                    SKIP below are left out unless --no-skip is given
#   --no-skip        run the SKIP cases too
#   --opt LEVEL      device code optimisation level (default 3, as rocPRIM's Release build)
#   --host-opt LEVEL host code optimisation level (default 0: the host half of these
#                    typed tests is most of their compile time, and only checks results)
#   --out DIR        build and result directory (default: target/rocprim-conformance)
#   --lib DIR        the hipshim library directory (default: the staged release build)
#   --build-only / --run-only
# Needs a release build (`cargo build --release --workspace`) for hipshim's libraries, and
# librocprim-dev and libgtest-dev (scripts/setup.sh installs them).
# Results: OUT/results/TARGET/PROGRAM.cases (one "PASS|FAIL|TIMEOUT|CRASH name" line per
# case), OUT/results/TARGET/logs/PROGRAM.log (the program's output) and the table on
# stdout (also OUT/results/TARGET/summary.txt).
set -euo pipefail

scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$scripts")"
tests="block_reduce,warp_scan,device_reduce,device_scan,device_radix_sort,device_histogram,block_radix_sort"
targets="gfx90a,gfx942"
jobs=1
run_jobs=1
timeout_s=900
filter=""
opt=3
host_opt=0
out="${CARGO_TARGET_DIR:-$repo/target}/rocprim-conformance"
build=1
run=1
skip_limits=1
src=""
lib_override=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --tests) tests="$2"; shift 2 ;;
        --targets) targets="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --run-jobs) run_jobs="$2"; shift 2 ;;
        --timeout) timeout_s="$2"; shift 2 ;;
        --filter) filter="$2"; shift 2 ;;
        --opt) opt="$2"; shift 2 ;;
        --host-opt) host_opt="$2"; shift 2 ;;
        --no-skip) skip_limits=0; shift ;;
        --out) out="$2"; shift 2 ;;
        --lib) lib_override="$2"; shift 2 ;;
        --build-only) run=0; shift ;;
        --run-only) build=0; shift ;;
        -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
        -*) echo "rocprim-conformance: unknown option $1" >&2; exit 2 ;;
        *) src="$1"; shift ;;
    esac
done
if [[ $build == 1 && ( -z "$src" || ! -f "$src/test/rocprim/test_utils.hpp" ) ]]; then
    echo "rocprim-conformance: give a rocPRIM tree (a directory with test/rocprim); see --help" >&2
    exit 2
fi
[[ -n "$src" && -d "$src" ]] && src="$(cd "$src" && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# The ROCm 5.2 stack Debian installs, for both compilers.
export HIP_PLATFORM=amd HIP_PATH=/usr ROCM_PATH=/usr

# The programs asked for, as test_NAME.
names=()
if [[ $tests == all ]]; then
    for f in "$src"/test/rocprim/test_*.cpp "$src"/test/rocprim/test_*.cpp.in; do
        [[ -f "$f" ]] || continue
        b="$(basename "$f")"
        names+=("${b%%.*}")
    done
else
    IFS=, read -r -a list <<< "$tests"
    for t in "${list[@]}"; do
        names+=("test_${t#test_}")
    done
fi
IFS=, read -r -a target_list <<< "$targets"

# compile TARGET SOURCE OBJECT: one translation unit for TARGET.
compile() {
    local target="$1" source="$2" object="$3"
    local flags=(-std=c++14 "-O$opt" -Xarch_host "-O$host_opt" -DNDEBUG -w -I "$tsrc"
        -I "$tsrc/rocprim")
    case "$target" in
        gfx90a)
            nice -n 10 hipcc --offload-arch=gfx90a "${flags[@]}" -c "$source" -o "$object" ;;
        gfx942)
            nice -n 10 clang++-19 -x hip --offload-arch=gfx942 -mcode-object-version=5 \
                --rocm-path=/usr "--rocm-device-lib-path=$devlibs" -D__HIP_PLATFORM_AMD__ \
                "${flags[@]}" -c "$source" -o "$object" ;;
    esac
}

# link TARGET OUTPUT OBJECT...: a googletest program linked to libamdhip64.so.5, as
# rocPRIM's build makes it (hipshim then stands in for that library).
link() {
    local target="$1" output="$2"
    shift 2
    case "$target" in
        gfx90a) hipcc --offload-arch=gfx90a "$@" -o "$output" -lgtest_main -lgtest -lpthread ;;
        gfx942)
            clang++-19 --hip-link --offload-arch=gfx942 --rocm-path=/usr "$@" -o "$output" \
                -L/usr/lib/x86_64-linux-gnu -lamdhip64 -lgtest_main -lgtest -lpthread ;;
    esac
}

# sources NAME GENDIR: the translation units of program NAME. A .cpp.in is cut into
# slices as rocPRIM's CMake does (add_rocprim_test_parallel): one file per non-typed test
# slice (ROCPRIM_TEST_SLICE) and one per typed-suite x type slice, the others set to -1.
sources() {
    local name="$1" gen="$2" in="$tsrc/rocprim/$1.cpp.in"
    if [[ -f "$tsrc/rocprim/$name.cpp" ]]; then
        echo "$tsrc/rocprim/$name.cpp"
        # test_basic checks linking several units that include rocPRIM.
        [[ $name == test_basic && -f "$tsrc/rocprim/detail/get_rocprim_version.cpp" ]] &&
            echo "$tsrc/rocprim/detail/get_rocprim_version.cpp"
        return 0
    fi
    [[ -f "$in" ]] || return 0
    mkdir -p "$gen"
    slices() { grep -oE "$1 *== *[0-9]+" "$in" | grep -oE '[0-9]+$' | sort -un || true; }
    # configure NAME SUITE TYPE TEST: one slice file, as configure_file(@ONLY) writes it.
    configure() {
        local file="$gen/$1.cpp"
        sed -E -e "s/^#cmakedefine (ROCPRIM_TEST_SUITE_SLICE) .*/#define \\1 $2/" \
            -e "s/^#cmakedefine (ROCPRIM_TEST_TYPE_SLICE) .*/#define \\1 $3/" \
            -e "s/^#cmakedefine (ROCPRIM_TEST_SLICE) .*/#define \\1 $4/" "$in" > "$file.new"
        if cmp -s "$file.new" "$file"; then rm -f "$file.new"; else mv "$file.new" "$file"; fi
        echo "$file"
    }
    local s t
    for s in $(slices ROCPRIM_TEST_SLICE); do
        configure "${name}_$s" -1 -1 "$s"
    done
    for s in $(slices ROCPRIM_TEST_SUITE_SLICE); do
        for t in $(slices ROCPRIM_TEST_TYPE_SLICE); do
            configure "${name}_typed_${s}_$t" "$s" "$t" -1
        done
    done
}

if [[ $build == 1 ]]; then
    tsrc="$src/test"
    devlibs="$("$scripts/hip-devlibs.sh")"
    export -f compile
    export devlibs tsrc opt host_opt
    for target in "${target_list[@]}"; do
        for name in "${names[@]}"; do
            bdir="$out/build/$target/$name"
            mkdir -p "$bdir"
            mapfile -t units < <(sources "$name" "$out/build/gen/$name")
            if [[ ${#units[@]} -eq 0 ]]; then
                echo "rocprim-conformance: $name: no test/rocprim/$name.cpp or .cpp.in: skipped" >&2
                continue
            fi
            for unit in "${units[@]}"; do
                obj="$bdir/$(basename "${unit%.cpp}").o"
                [[ -f "$obj" && "$obj" -nt "$unit" ]] && continue
                printf '%s\0%s\0%s\0' "$target" "$unit" "$obj"
            done | xargs -0 -r -n 3 -P "$jobs" bash -c \
                'echo "rocprim-conformance: $0: compiling $(basename "$1")" >&2
                 compile "$0" "$1" "$2" 2> "${2%.o}.err" || { echo "rocprim-conformance: $0: $1 does not compile (${2%.o}.err)" >&2; rm -f "$2"; }'
            objects=()
            for unit in "${units[@]}"; do
                obj="$bdir/$(basename "${unit%.cpp}").o"
                [[ -f "$obj" ]] && objects+=("$obj")
            done
            if [[ ${#objects[@]} -ne ${#units[@]} ]]; then
                echo "rocprim-conformance: $target/$name: not every unit compiled: not linked" >&2
                rm -f "$bdir/$name"
                continue
            fi
            link "$target" "$bdir/$name" "${objects[@]}" 2> "$bdir/link.err" ||
                echo "rocprim-conformance: $target/$name: link failed ($bdir/link.err)" >&2
        done
    done
fi

[[ $run == 1 ]] || exit 0

libdir="${lib_override:-$("$scripts/stage-libs.sh" release)}"
if [[ ! -d "$libdir" ]]; then
    echo "rocprim-conformance: no $libdir: run cargo build --release --workspace first" >&2
    exit 1
fi

# run_program BINARY RESULTS TARGET: runs a googletest program until every case has run:
# a case that crashes the program, exits it (rocPRIM's HIP_CHECK calls exit) or outlasts
# the timeout is recorded and the program starts again after it.
run_program() {
    local binary="$1" results="$2" target="$3" name status attempt=0
    name="$(basename "$binary")"
    local cases="$results/$name.cases" log="$results/logs/$name.log"
    local done_filter="" base_filter="${FILTER:-*}"
    : > "$cases"
    : > "$log"
    while :; do
        attempt=$((attempt + 1))
        local part="$results/logs/$name.part" spec="$base_filter"
        # googletest's filter: positive patterns, then one '-' and the negative ones.
        if [[ -n "$done_filter" ]]; then
            case "$spec" in
                *-*) spec="$spec:$done_filter" ;;
                *) spec="$spec-$done_filter" ;;
            esac
        fi
        set +e
        (cd "$(dirname "$binary")" &&
            env LD_LIBRARY_PATH="$LIBDIR" HIPSHIM_DEVICE=sim HSASIM_GFX="$target" \
                timeout -k 5 "$TIMEOUT_S" "$binary" --gtest_color=no \
                "--gtest_filter=$spec") > "$part" 2>&1
        status=$?
        set -e
        cat "$part" >> "$log"
        # googletest's own verdicts.
        # A failing typed case reads "[  FAILED  ] NAME, where TypeParam = ... (N ms)"; the
        # summary at the end repeats it without the time.
        sed -nE -e 's/^\[       OK \] ([^ ]+) \([0-9]+ ms\)$/PASS \1/p' \
            -e 's/^\[  FAILED  \] ([^ ,]+)(, where .*)? \([0-9]+ ms\)$/FAIL \1/p' "$part" >> "$cases"
        # The case that was running when the program ended without a verdict.
        local last verdict=CRASH finished=0
        [[ $status == 124 || $status == 137 ]] && verdict=TIMEOUT
        grep -qE '^\[==========\] .* ran\.' "$part" && finished=1
        last="$(sed -nE 's/^\[ RUN      \] ([^ ]+).*/\1/p' "$part" | tail -n 1)"
        if [[ -n "$last" ]] && ! awk -v n="$last" '$2 == n { found = 1 } END { exit !found }' "$cases"; then
            echo "$verdict $last" >> "$cases"
        elif [[ $finished == 0 && ( $status != 0 || -z "$last" ) ]]; then
            # Ended outside any case (start-up, or between suites): nothing to skip.
            echo "$verdict $name(outside-a-case)" >> "$cases"
            break
        fi
        # Finished, or stopped by a case: then start again without the cases that ran.
        [[ $finished == 1 || $attempt -ge 50 ]] && break
        done_filter="$(awk '{print $2}' "$cases" | paste -sd: -)"
    done
    rm -f "$results/logs/$name.part"
    sort -u -k2 "$cases" -o "$cases"
}
export -f run_program
# Cases beyond what a software GPU can run, by googletest pattern: SortKeysOver4G sorts
# 2^32 + 32 one-byte keys (4 GiB on the host and the device), LargeIndices and LargeInput
# cases reduce, scan or select 2^30 to 2^35 elements of counting iterators: hours of
# interpreted passes each (hsasim's dispatch timeout stops them).
SKIP="*SortKeysOver4G*:*LargeIndices*:*LargeInput*"
if [[ $skip_limits == 1 ]]; then
    case "$filter" in
        *-*) filter="$filter:$SKIP" ;;
        *) filter="${filter:-*}-$SKIP" ;;
    esac
fi
export LIBDIR="$libdir" TIMEOUT_S="$timeout_s" FILTER="$filter"

for target in "${target_list[@]}"; do
    results="$out/results/$target"
    mkdir -p "$results/logs"
    rows=()
    # Results of programs not run this time stay (a later run can take other programs).
    for name in "${names[@]}"; do
        rm -f "$results/$name.cases" "$results/logs/$name".*
        binary="$out/build/$target/$name/$name"
        if [[ -x "$binary" ]]; then printf '%s\0' "$binary"; fi
    done | xargs -0 -r -n 1 -P "$run_jobs" bash -c 'start=$(date +%s); run_program "$3" "$1" "$2"; echo $(( $(date +%s) - start )) > "$1/logs/$(basename "$3").seconds"' _ "$results" "$target" || true
    total_pass=0
    total_cases=0
    for name in "${names[@]}"; do
        if [[ ! -f "$results/$name.cases" ]]; then
            rows+=("$(printf '%-8s %-36s %s' "$target" "$name" "not built")")
            continue
        fi
        pass=$(grep -c '^PASS ' "$results/$name.cases" || true)
        cases=$(wc -l < "$results/$name.cases")
        secs="$(cat "$results/logs/$name.seconds" 2>/dev/null || echo '?')"
        verdict=PASS
        [[ $pass == "$cases" && $cases -gt 0 ]] || verdict=FAIL
        total_pass=$((total_pass + pass))
        total_cases=$((total_cases + cases))
        rows+=("$(printf '%-8s %-36s %-4s %4d / %-4d %6s s' "$target" "$name" "$verdict" "$pass" "$cases" "$secs")")
    done
    {
        echo "rocPRIM tests ($(basename "${src:-rocPRIM}")) on hipshim over hsasim, $target"
        for row in "${rows[@]}"; do echo "$row"; done
        echo "all: $total_pass / $total_cases cases passed"
        echo "failing cases:"
        cat "$results"/*.cases 2>/dev/null | grep -v '^PASS ' | sed 's/^/  /' || true
    } | tee "$results/summary.txt"
done
