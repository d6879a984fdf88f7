#!/usr/bin/env bash
# HeCBench's HIP programs on hipshim and on AMD's runtime over hsasim: builds each listed
# program out of tree, runs it with its Makefile's `run:` arguments under both runtimes with
# a time limit, and gives each a verdict, its wall time and the reason of each non-pass.
# Not part of CI (hours on one core). docs/dev/hecbench.md describes it and its results.
#
# Get the collection (never copy its code into this repository), e.g.
#   git clone https://github.com/zjin-lcf/HeCBench && git -C HeCBench checkout f27000a5
#
# Usage: scripts/hecbench.sh [OPTIONS] HECBENCH_DIR
#   HECBENCH_DIR     a HeCBench checkout (a directory with src/); optional with --run-only
#   --list FILE      program names (src/ directory names, e.g. adjacent-hip), one a line,
#                    `#` comments allowed (default: ../shared/hecbench-dev.txt beside the repo)
#   --only A,B       just these programs of the list (`-hip` may be left off)
#   --arch ARCH      the GPU the programs are built for and hsasim models: gfx90a (default;
#                    Debian's hipcc first, clang++-19 where that fails) or gfx942 (clang++-19
#                    only: ROCm 5.2's hipcc does not know it)
#   --compilers LIST hipcc and/or clang, tried in this order (default hipcc,clang)
#   --runtimes LIST  hipshim and/or amd (AMD's libamdhip64.so.5 on hsasim; runs only what
#                    hipcc built, as the clang++-19 builds link hipshim), default both
#   --timeout S      seconds per program and runtime (default 300)
#   --jobs N         programs run at once, each on one hsasim thread (default 1)
#   --out DIR        build and result directory (default: target/hecbench)
#   --lib DIR        hipshim's staged lib dir (default: the release build's, made by
#                    scripts/stage-libs.sh release); AMD's runtime runs with DIR/as-rocr
#   --build-only / --run-only
#                    --run-only reruns what an earlier build left in OUT (e.g. copied to
#                    another host: give HECBENCH_DIR there too if the programs read inputs
#                    from the collection)
#   --sizes WHICH    full (default: the Makefile's arguments), reduced (a smaller size or
#                    fewer repetitions, where the script knows one: reduced_args below;
#                    reported as NAME@reduced) or both; --reduced is --sizes both
#   --report         neither build nor run: the table of what OUT holds for the programs
# Builds run one at a time under `nice -n 19` (this is meant for a shared host).
# Skipped, with the reason, and counted: programs that need a library that is not installed
# (hipBLAS, rocBLAS, hipCUB, rocThrust, hipFFT, hipRAND, hipSPARSE, MPI, ...: Debian 12 ships
# some of them, the table below says which), and runs that fail when an input file their
# arguments name is missing (HeCBench keeps many outside git: DVC data, downloads); an
# input the collection holds compressed beside it (FILE.bz2, .gz, .xz) is unpacked into OUT.
# Results: OUT/src/NAME (the build), OUT/results/RUNTIME/NAME.log (its output) and the
# table on stdout and in OUT/summary.md (with the date and the command).
set -euo pipefail

scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$scripts")"
command_line="scripts/hecbench.sh $*"
list="$repo/../shared/hecbench-dev.txt"
only=""
arch=gfx90a
runtimes="hipshim,amd"
compilers="hipcc,clang"
timeout_s=300
jobs=1
out="${CARGO_TARGET_DIR:-$repo/target}/hecbench"
lib_override=""
build=1
run=1
sizes=full
checkout=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --list) list="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --arch) arch="$2"; shift 2 ;;
        --compilers) compilers="$2"; shift 2 ;;
        --runtimes) runtimes="$2"; shift 2 ;;
        --timeout) timeout_s="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --lib) lib_override="$2"; shift 2 ;;
        --build-only) run=0; shift ;;
        --run-only) build=0; shift ;;
        --sizes) sizes="$2"; shift 2 ;;
        --reduced) sizes=both; shift ;;
        --report) build=0; run=0; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        -*) echo "hecbench: unknown option $1" >&2; exit 2 ;;
        *) checkout="$1"; shift ;;
    esac
done
case "$sizes" in
    full|reduced|both) ;;
    *) echo "hecbench: --sizes is full, reduced or both" >&2; exit 2 ;;
esac
case "$arch" in
    gfx90a|gfx942) ;;
    *) echo "hecbench: --arch is gfx90a or gfx942" >&2; exit 2 ;;
esac
if [[ $build == 1 && ( -z "$checkout" || ! -d "$checkout/src" ) ]]; then
    echo "hecbench: give a HeCBench checkout (a directory with src/); see --help" >&2
    exit 2
fi
[[ -n "$checkout" ]] && checkout="$(cd "$checkout" && pwd)"

# The programs: the list file's names, or --only's (which need not be in the list file).
programs=()
if [[ -n "$only" ]]; then
    IFS=, read -r -a programs <<< "$only"
else
    if [[ ! -f "$list" ]]; then
        echo "hecbench: no list file $list: give --list FILE (one program name a line)" >&2
        exit 2
    fi
    while read -r name; do
        name="${name%%#*}"
        name="${name//[[:space:]]/}"
        [[ -n "$name" ]] && programs+=("$name")
    done < "$list"
fi
for i in "${!programs[@]}"; do
    [[ "${programs[$i]}" == *-hip ]] || programs[i]="${programs[$i]}-hip"
done
# With the list file there, --only picks from it: the programs it leaves out are held out
# (issue 39), so a name outside it is refused rather than built.
if [[ -n "$only" && -f "$list" ]]; then
    for name in "${programs[@]}"; do
        if ! grep -qxF "$name" "$list"; then
            echo "hecbench: $name is not in $list (held out?): give --list FILE to choose" >&2
            exit 2
        fi
    done
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
srcdir="$out/src"
mkdir -p "$srcdir" "$out/results"

# Libraries HeCBench programs use beyond HIP: "name|what in a source shows it (grep -E, on
# #include lines)|what in the Makefile shows it|a file that is there when it is installed|
# where to get it".
libraries=(
    "hipBLAS|<hipblas|-lhipblas\\b|/usr/include/hipblas/hipblas.h|not packaged in Debian 12"
    "hipBLASLt|<hipblaslt|-lhipblaslt|/usr/include/hipblaslt/hipblaslt.h|not packaged in Debian 12"
    "rocBLAS|<rocblas|-lrocblas|/usr/include/rocblas/rocblas.h|not packaged in Debian 12"
    "hipCUB|<hipcub/|-lhipcub|/usr/include/hipcub/hipcub.hpp|not packaged in Debian 12"
    "rocThrust|<thrust/|-lrocthrust|/usr/include/thrust/version.h|not packaged in Debian 12"
    "hipFFT|<hipfft|-lhipfft|/usr/include/hipfft/hipfft.h|not packaged in Debian 12"
    "rocFFT|<rocfft|-lrocfft|/usr/include/rocfft/rocfft.h|not packaged in Debian 12"
    "hipSOLVER|<hipsolver|-lhipsolver|/usr/include/hipsolver/hipsolver.h|not packaged in Debian 12"
    "rocSOLVER|<rocsolver|-lrocsolver|/usr/include/rocsolver/rocsolver.h|not packaged in Debian 12"
    "MIOpen|<miopen|-lMIOpen|/usr/include/miopen/miopen.h|not packaged in Debian 12"
    "RCCL|<rccl|-lrccl|/usr/include/rccl/rccl.h|not packaged in Debian 12"
    "hipRAND|<hiprand|-lhiprand|/usr/include/hiprand/hiprand.h|Debian 12: apt install libhiprand-dev"
    "rocRAND|<rocrand|-lrocrand|/usr/include/rocrand/rocrand.h|Debian 12: apt install librocrand-dev"
    "hipSPARSE|<hipsparse|-lhipsparse|/usr/include/hipsparse/hipsparse.h|Debian 12: apt install libhipsparse-dev"
    "OpenMP runtime|[<\"]omp\\.h|-fopenmp|/usr/lib/llvm-15/lib/libomp.so|Debian 12: apt install libomp-15-dev (hipcc's clang 15), libomp-19-dev (clang++-19)"
    "MPI|[<\"]mpi\\.h|-lmpi|/usr/bin/mpicxx|Debian 12: apt install libopenmpi-dev (HIP with MPI: issue 39 point 5)"
)

# needed_library DIR: "NAME (WHERE)" of the first library the program in DIR needs that is
# not installed; nothing if it needs none (or all it needs are installed).
needed_library() {
    local dir="$1" entry name include link installed where
    for entry in "${libraries[@]}"; do
        IFS='|' read -r name include link installed where <<< "$entry"
        [[ -e "$installed" ]] && continue
        if grep -rqsE "^[[:space:]]*#[[:space:]]*include[[:space:]]*$include" "$dir" ||
            grep -qsE -- "$link" "$dir/Makefile"; then
            echo "$name ($where)"
            return
        fi
    done
}

# run_commands DIR: the commands of the Makefile's `run:` target as make would run them
# (its variables expanded, LAUNCHER empty), one a line, leading `@`/`-` removed: what the
# program is run with (recorded, and searched for input files). Right after a build, so
# that nothing but `run` itself is left to do.
run_commands() {
    make -s -n -C "$1" LAUNCHER= run 2>/dev/null | sed -E 's/^[@-]+//' |
        grep -v '^[[:space:]]*$' || true
}

# make_var DIR NAME: the value of a Makefile variable (`program`: the executable).
make_var() {
    make -s -C "$1" --eval="hecbench-print-var: ; @echo \$($2)" hecbench-print-var 2>/dev/null |
        tail -1
}

# HeCBench keeps many inputs outside git (DVC-tracked tarballs, downloads a README names).
# missing_inputs DIR: each argument of the run commands that names a file (a path with a
# `/`, or a name with a data-file suffix) that does not exist, relative to DIR.
missing_inputs() {
    local dir="$1" line word
    local -a words
    while read -r line; do
        # The first word is the program (or a shell builtin such as ulimit); read -a, not
        # word splitting, so that a `*` in an argument is not expanded here.
        read -r -a words <<< "${line#* }"
        for word in "${words[@]}"; do
            word="${word%\"}"; word="${word#\"}"; word="${word%\'}"; word="${word#\'}"
            [[ "$word" == -* || "$word" == *'$'* || "$word" == *'>'* ]] && continue
            if [[ "$word" == */* || "$word" =~ \.(txt|dat|bin|mtx|ppm|pgm|bmp|png|jpg|csv|in|su|egr|gr|graph|raw|fa|fasta|fastq|json|xyz|pdb|tar|gz|bz2|bz|h5|obj|ply|vtk|ll|tsv|wav|net|grd|data)$ ]]; then
                [[ -e "$dir/$word" ]] || echo "$word"
            fi
        done
    done < <(run_commands "$dir")
}

# dvc_source DIR FILE: the DVC pointer that holds FILE (named relative to DIR), if any:
# one beside it or in a directory above it (HeCBench packs a folder into one tarball), else
# one under src/data that names it.
dvc_source() {
    local where pointer base
    where="$(dirname "$(realpath -m -s "$1/$2")")"
    while [[ "$where" == "$srcdir"/* ]]; do
        pointer="$(compgen -G "$where/*.dvc" | head -1 || true)"
        if [[ -n "$pointer" ]]; then
            echo "src/${pointer#"$srcdir"/}"
            return
        fi
        where="$(dirname "$where")"
    done
    base="$(basename "$2")"
    grep -lsE "path: *${base%%.*}" "$srcdir"/data/*/*.dvc | head -1 |
        sed "s|^$srcdir/|src/|" || true
}

# provide_input DIR FILE: make FILE (named relative to DIR) where the collection holds it
# compressed beside it (FILE.bz2, .gz, .xz), as its READMEs ask users to do. The directory
# it lies in becomes a copy in OUT/src first, so that the checkout is not written to.
# Fails if it cannot.
provide_input() {
    local path packed tool top target
    path="$(realpath -m -s "$1/$2")"
    [[ "$path" == "$srcdir"/* ]] || return 1
    for packed in "$path.bz2:bzip2" "$path.gz:gzip" "$path.xz:xz"; do
        tool="${packed##*:}"
        packed="${packed%:*}"
        [[ -f "$packed" ]] || continue
        top="${path#"$srcdir"/}"
        top="$srcdir/${top%%/*}"
        if [[ -L "$top" ]]; then
            target="$(readlink "$top")"
            rm "$top"
            cp -a "$target" "$top"
        fi
        if "$tool" -dc "$packed" > "$path"; then
            echo "$2 (from $(basename "$packed"))"
            return 0
        fi
        rm -f "$path"
    done
    return 1
}

# ---------------------------------------------------------------------------------------
# Build.

# Both compilers are reached as `hipcc` on PATH (some Makefiles call it by name, not $(CC)),
# through wrappers that add the target: tools/hipcc/hipcc (Debian's hipcc) and
# tools/clang/hipcc (clang++-19 with hipshim's headers and library, as scripts/build-hip.sh).
make_wrappers() {
    local lib_dir="$1" devlibs="$2"
    mkdir -p "$out/tools/hipcc" "$out/tools/clang"
    cat > "$out/tools/hipcc/hipcc" <<EOF
#!/usr/bin/env bash
# Made by scripts/hecbench.sh: Debian's hipcc for $arch (hipcc would ask the GPU otherwise).
exec nice -n 19 /usr/bin/hipcc --offload-arch=$arch "\$@"
EOF
    cat > "$out/tools/clang/hipcc" <<EOF
#!/usr/bin/env bash
# Made by scripts/hecbench.sh: clang++-19 as hipcc, with hipshim's headers and library
# (the flags of scripts/build-hip.sh). Sources are compiled as HIP whatever their suffix
# (.cu), objects and libraries are linked as they are. hip_runtime.h comes first, as
# clang's own HIP wrapper header would (-nogpuinc leaves that out): programs include <algorithm>
# or <new> before it, and clang's CUDA wrappers of those need __device__ and ::malloc.
args=()
link=1
for arg in "\$@"; do
    case "\$arg" in
        -c|-E|-S|-M|-MM) link=0; args+=("\$arg") ;;
        *.cu|*.cpp|*.cc|*.cxx|*.hip|*.C) args+=(-x hip "\$arg" -x none) ;;
        *) args+=("\$arg") ;;
    esac
done
flags=(--offload-arch=$arch -nogpuinc -mcode-object-version=5 -Wno-unused-command-line-argument
    --rocm-device-lib-path=$devlibs -I$repo/hip_headers -include cstdlib -include hip/hip_runtime.h)
if [[ \$link == 1 ]]; then
    flags+=(--hip-link -no-hip-rt -L$lib_dir -Wl,-rpath,$lib_dir)
    exec nice -n 19 clang++-19 "\${flags[@]}" "\${args[@]}" -lamdhip64
fi
exec nice -n 19 clang++-19 "\${flags[@]}" "\${args[@]}"
EOF
    # A run goes through `make run` (some run targets recurse into make or a script), with
    # this `hipcc` first on PATH: a run that would rebuild the program fails, and says so.
    mkdir -p "$out/tools/no-rebuild"
    cat > "$out/tools/no-rebuild/hipcc" <<'STUB'
#!/bin/sh
echo "hecbench: make tried to rebuild the program at run time (hipcc $*)" >&2
exit 97
STUB
    chmod +x "$out/tools/hipcc/hipcc" "$out/tools/clang/hipcc" "$out/tools/no-rebuild/hipcc"
}

# link_collection: OUT/src mirrors the checkout's src/ (links), so that a program's relative
# paths (../include, ../data, a sibling's input files) resolve; built programs are copies.
link_collection() {
    local entry name
    [[ -n "$checkout" ]] || return 0
    for entry in "$checkout"/src/*; do
        name="$(basename "$entry")"
        if [[ -L "$srcdir/$name" || ! -e "$srcdir/$name" ]]; then
            ln -sfn "$entry" "$srcdir/$name"
        fi
    done
}

# first_error LOG: the first line of a compiler's output that reports an error (the
# linker's own, not the driver's summary of it).
first_error() {
    local line
    line="$(grep -E 'error:|undefined reference|cannot find|No rule to make|not found' "$1" |
        grep -m1 -v 'linker command failed' || true)"
    [[ -n "$line" ]] || line="$(grep -v '^[[:space:]]*$' "$1" | tail -1)"
    echo "${line:0:220}"
}

# build_program NAME: one program, hipcc first (gfx90a) then clang++-19. Writes
# OUT/src/NAME/hecbench.build: "STATUS|COMPILER|REASON" (STATUS: BUILT, BUILD-FAIL, SKIP).
build_program() {
    local name="$1" dir="$srcdir/$1" program needs compiler path status=BUILD-FAIL
    local reason="" first=""
    rm -rf "$dir"
    if [[ ! -d "$checkout/src/$name" ]]; then
        mkdir -p "$dir"
        echo "SKIP|-|not in this checkout (src/$name)" > "$dir/hecbench.build"
        return
    fi
    cp -a "$checkout/src/$name" "$dir"
    needs="$(needed_library "$dir")"
    if [[ -n "$needs" ]]; then
        echo "SKIP|-|needs $needs" > "$dir/hecbench.build"
        return
    fi
    program="$(make_var "$dir" program)"
    local -a compiler_list
    IFS=, read -r -a compiler_list <<< "$compilers"
    for compiler in "${compiler_list[@]}"; do
        [[ $compiler == hipcc && $arch != gfx90a ]] && continue
        make -s -C "$dir" clean > /dev/null 2>&1 || true
        path="$out/tools/$compiler:$PATH"
        if PATH="$path" make -C "$dir" -j1 CC=hipcc > "$dir/build-$compiler.log" 2>&1 &&
            [[ -z "$program" || -x "$dir/${program%% *}" ]]; then
            status=BUILT
            reason=""
            break
        fi
        first="$(first_error "$dir/build-$compiler.log")"
        reason="${reason:+$reason; }$compiler: ${first:-no executable}"
    done
    [[ $status == BUILT ]] || compiler=-
    PATH="$out/tools/no-rebuild:$PATH" run_commands "$dir" > "$dir/hecbench.run"
    if [[ $status == BUILT ]]; then
        local file dvc made notes=()
        for file in $(missing_inputs "$dir"); do
            if made="$(provide_input "$dir" "$file")"; then
                echo "made input $made" >> "$dir/hecbench.inputs"
                continue
            fi
            dvc="$(dvc_source "$dir" "$file")"
            notes+=("$file${dvc:+ (DVC: $dvc)}")
        done
        if [[ ${#notes[@]} -gt 0 ]]; then
            reason="$(printf '%s, ' "${notes[@]}")"
            reason="missing input: ${reason%, }"
        fi
    fi
    echo "$status|$compiler|$reason" > "$dir/hecbench.build"
}

if [[ $build == 1 ]]; then
    lib_dir="${lib_override:-$("$scripts/stage-libs.sh" release)}"
    devlibs="$("$scripts/hip-devlibs.sh")"
    make_wrappers "$lib_dir" "$devlibs"
    link_collection
    for name in "${programs[@]}"; do
        printf 'hecbench: building %s ... ' "$name" >&2
        build_program "$name"
        cut -d'|' -f1,2 "$srcdir/$name/hecbench.build" | tr '|' ' ' >&2
        [[ ! -f "$srcdir/$name/hecbench.inputs" ]] || sed 's/^/  /' "$srcdir/$name/hecbench.inputs" >&2
    done
elif [[ -n "$checkout" ]]; then
    link_collection
fi

# ---------------------------------------------------------------------------------------
# Run.

# reduced_args NAME: the smaller run (one command line, in the program's directory) for
# programs whose arguments are known from their usage line, or nothing.
reduced_args() {
    case "$1" in
        axpby-hip) echo "./main 4" ;;                  # tensors (1000)
        bincount-hip) echo "./main 100000 1" ;;        # elements (10^7), repeat (100)
        boxfilter-hip) echo "./main ../boxfilter-sycl/data/lenaRGB.ppm 1" ;;  # repeat (10^4)
        bsearch-hip) echo "./main 65536 1" ;;          # elements (2^23), repeat (100)
        lda-hip) echo "./main 1" ;;                    # repeat (100)
        *) ;;
    esac
}

# variants NAME: the runs --sizes asks for: "" (full) and/or "reduced".
variants() {
    [[ $sizes == reduced ]] || echo full
    if [[ $sizes != full && -n "$(reduced_args "$1")" ]]; then
        echo reduced
    fi
}

# last_message LOG: the program's last error line, else its last line (make's own lines
# left out), shortened for the table.
last_message() {
    local lines line
    lines="$(grep -vE '^make(\[[0-9]+\])?: |^[[:space:]]*$' "$1" || true)"
    line="$(grep -iE 'error|fail|abort|fault|exception|terminate|assert' <<< "$lines" | tail -1 || true)"
    [[ -n "$line" ]] || line="$(tail -1 <<< "$lines")"
    [[ -n "$line" ]] || line="(no output)"
    echo "${line:0:160}"
}

# run_program NAME RUNTIME [reduced]: one program under one runtime. Writes
# OUT/results/RUNTIME/NAME.result: "VERDICT|SECONDS|REASON".
run_program() {
    local name="$1" runtime="$2" variant="${3:-}" dir="$srcdir/$1" status verdict reason=""
    local results="$out/results/$runtime" label="$1" start end seconds
    [[ -n "$variant" ]] && label="$1@$variant"
    local log="$results/$label.log"
    local built compiler build_reason
    IFS='|' read -r built compiler build_reason < "$dir/hecbench.build"
    if [[ $built != BUILT ]]; then
        echo "$built|-|$build_reason" > "$results/$label.result"
        return
    fi
    local -a env_vars=(HSASIM_GFX="$arch" HSASIM_THREADS=1)
    case "$runtime" in
        hipshim) env_vars+=(LD_LIBRARY_PATH="$RUN_LIB" HIPSHIM_DEVICE=sim) ;;
        amd)
            if [[ $compiler != hipcc ]]; then
                echo "SKIP|-|built by clang++-19 against hipshim (AMD's 5.2 runtime runs hipcc builds)" \
                    > "$results/$label.result"
                return
            fi
            env_vars+=(LD_LIBRARY_PATH="$RUN_LIB/as-rocr") ;;
    esac
    # Line-buffered output (stdbuf), so that a run stopped at the time limit shows how far
    # it got.
    local -a command=(stdbuf -oL make -s LAUNCHER= CC=hipcc run)
    [[ -n "$variant" ]] && command=(stdbuf -oL bash -c "$(reduced_args "$name")")
    start=$(date +%s.%N)
    set +e
    (cd "$dir" && env "${env_vars[@]}" PATH="$out/tools/no-rebuild:$PATH" \
        timeout -k 10 "$TIMEOUT_S" "${command[@]}") > "$log" 2>&1
    status=$?
    set -e
    # make answers 2 for any failing command; its last line says how the program ended.
    local make_error
    make_error="$(grep -E '^make(\[[0-9]+\])?: \*\*\* ' "$log" | tail -1 || true)"
    if [[ $status == 2 && -n "$make_error" ]]; then
        if [[ "$make_error" =~ Error\ ([0-9]+) ]]; then
            status="${BASH_REMATCH[1]}"
        else
            # Killed by a signal: make names it ("Segmentation fault", "Aborted", ...).
            status=128
        fi
    fi
    end=$(date +%s.%N)
    seconds="$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
    # The program's own verdict, when it prints one.
    local fail_line pass_line
    fail_line="$(grep -m1 -E '\b(FAIL|FAILED|Fail|Failed|FAILURE|fail|failed|Error|ERROR|error)\b' "$log" |
        grep -vE '\b(0|zero) (errors?|failures?|failed)\b|errors?[: =]+0\b|fail(ed|ures?)?[: =]+0\b' || true)"
    pass_line="$(grep -m1 -E '\b(PASS|PASSED|Pass|Passed|pass|passed|SUCCESS|Success)\b' "$log" || true)"
    if [[ $status == 124 || $status == 137 ]]; then
        verdict=TIMEOUT
        reason="killed after ${TIMEOUT_S} s: $(last_message "$log")"
    elif [[ $status -ge 128 ]]; then
        verdict=CRASH
        reason="$(last_message "$log")"
    elif [[ $status != 0 ]]; then
        verdict=FAIL
        reason="exit $status: $(last_message "$log")"
    elif [[ -n "$fail_line" ]]; then
        verdict=FAIL
        reason="$(echo "$fail_line" | cut -c1-160)"
    else
        verdict=PASS
        [[ -n "$pass_line" ]] || reason="exit 0, prints no verdict of its own"
    fi
    # A name in the arguments that is no file may be an output (word2vec's vectors.bin), so
    # a missing input only explains a run that did not pass.
    if [[ $verdict != PASS && $build_reason == missing* ]]; then
        verdict=SKIP
    fi
    echo "$verdict|$seconds|$reason" > "$results/$label.result"
}

if [[ $run == 1 ]]; then
    RUN_LIB="${lib_override:-$("$scripts/stage-libs.sh" release)}"
    if [[ ! -d "$RUN_LIB" ]]; then
        echo "hecbench: no $RUN_LIB: cargo build --release -p hipshim -p hsasim first" >&2
        exit 1
    fi
    TIMEOUT_S="$timeout_s"
    export RUN_LIB TIMEOUT_S arch srcdir out
    export -f run_program reduced_args last_message
    IFS=, read -r -a runtime_list <<< "$runtimes"
    for runtime in "${runtime_list[@]}"; do
        mkdir -p "$out/results/$runtime"
    done
    for name in "${programs[@]}"; do
        if [[ ! -f "$srcdir/$name/hecbench.build" ]]; then
            echo "hecbench: $name was not built (run without --run-only first)" >&2
            continue
        fi
        for runtime in "${runtime_list[@]}"; do
            for variant in $(variants "$name"); do
                [[ $variant == full ]] && variant=""
                rm -f "$out/results/$runtime/$name${variant:+@$variant}.result"
                printf '%s\0%s\0%s\0' "$name" "$runtime" "$variant"
            done
        done
    done | nice -n 19 xargs -0 -r -n 3 -P "$jobs" bash -c 'run_program "$0" "$1" "$2"'
fi

# ---------------------------------------------------------------------------------------
# Report: one row per program (and reduced run), totals per runtime.

IFS=, read -r -a runtime_list <<< "$runtimes"
rows=()
declare -A pass fail timeout crash skip total
built_count=0
skipped_count=0
build_fail_count=0
for runtime in "${runtime_list[@]}"; do
    pass[$runtime]=0; fail[$runtime]=0; timeout[$runtime]=0; crash[$runtime]=0; skip[$runtime]=0
    total[$runtime]=0
done
header="| program | built with |"
rule="|---|---|"
for runtime in "${runtime_list[@]}"; do
    header+=" $runtime | s |"
    rule+="---|---|"
done
header+=" reasons |"
rule+="---|"
for name in "${programs[@]}"; do
    [[ -f "$srcdir/$name/hecbench.build" ]] || continue
    IFS='|' read -r built compiler build_reason < "$srcdir/$name/hecbench.build"
    case "$built" in
        BUILT) built_count=$((built_count + 1)) ;;
        SKIP) skipped_count=$((skipped_count + 1)) ;;
        *) build_fail_count=$((build_fail_count + 1)) ;;
    esac
    labels=()
    for variant in $(variants "$name"); do
        [[ $variant == full ]] && labels+=("$name") || labels+=("$name@$variant")
    done
    for label in "${labels[@]}"; do
        case "$built:$compiler" in
            BUILT:clang) row="| $label | clang++-19 |" ;;
            BUILT:*) row="| $label | $compiler |" ;;
            *) row="| $label | $built |" ;;
        esac
        reasons=()
        [[ -n "$build_reason" ]] && reasons+=("$build_reason")
        for runtime in "${runtime_list[@]}"; do
            result="$out/results/$runtime/$label.result"
            if [[ -f "$result" ]]; then
                IFS='|' read -r verdict seconds reason < "$result"
            else
                verdict="-"; seconds="-"; reason=""
            fi
            row+=" $verdict | $seconds |"
            case "$verdict" in
                PASS) pass[$runtime]=$((pass[$runtime] + 1)) ;;
                FAIL) fail[$runtime]=$((fail[$runtime] + 1)) ;;
                TIMEOUT) timeout[$runtime]=$((timeout[$runtime] + 1)) ;;
                CRASH) crash[$runtime]=$((crash[$runtime] + 1)) ;;
                SKIP) skip[$runtime]=$((skip[$runtime] + 1)) ;;
            esac
            case "$verdict" in
                PASS|FAIL|TIMEOUT|CRASH) total[$runtime]=$((total[$runtime] + 1)) ;;
            esac
            if [[ $built == BUILT && -n "$reason" && "$reason" != "$build_reason" ]]; then
                reasons+=("$runtime: $reason")
            fi
        done
        reason_text="$(printf '%s; ' "${reasons[@]}")"
        reason_text="${reason_text%; }"
        row+=" ${reason_text//|/\\|} |"
        rows+=("$row")
    done
done

{
    echo "# HeCBench on hipshim and on AMD's runtime over hsasim"
    echo
    echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(nproc) cores; arch: $arch; timeout: ${timeout_s} s."
    echo
    echo "Command: \`$command_line\`"
    echo
    echo "$header"
    echo "$rule"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Programs: ${#programs[@]}; built: $built_count; build failed: $build_fail_count;" \
        "skipped (library or not in checkout): $skipped_count."
    echo
    echo "| runtime | ran | pass | fail | timeout | crash | skip |"
    echo "|---|---|---|---|---|---|---|"
    for runtime in "${runtime_list[@]}"; do
        echo "| $runtime | ${total[$runtime]} | ${pass[$runtime]} | ${fail[$runtime]} |" \
            "${timeout[$runtime]} | ${crash[$runtime]} | ${skip[$runtime]} |"
    done
} > "$out/summary.md.new"
mv "$out/summary.md.new" "$out/summary.md"
cat "$out/summary.md"
