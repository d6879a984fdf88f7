#!/usr/bin/env bash
# `hipshim compare` over the c_tests corpus: each program in c_tests/corpus/ is built by
# Debian's hipcc for gfx90a (AMD's headers, code object v4, linked to libamdhip64.so.5), run
# under AMD's runtime and under hipshim on hsasim with packet capture, and the differences
# are summarised per field: how many programs show it and one example of each side. Each
# program is built twice: at -O3 (what users run; ROCm 5.2's compiler drops the hidden
# arguments a kernel does not use) and at -O0 (every hidden argument of code object v4 stays
# in the metadata: global offsets, hostcall buffer, multigrid sync), so the hidden arguments
# the two runtimes write are compared too.
#
# Usage: scripts/compare-corpus.sh [PROGRAM...]   (default: every corpus program that
#        runs on gfx90a; names without .hip)
# Env:   OUT (default <repo>/target/compare-corpus): programs, one report per program, and
#        summary.txt; HIPSHIM (default <repo>/target/release/hipshim, built if missing).
set -euo pipefail

scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$scripts")"
out="${OUT:-$repo/target/compare-corpus}"
hipshim="${HIPSHIM:-$repo/target/release/hipshim}"
mkdir -p "$out"
if [[ ! -x "$hipshim" ]]; then
    (cd "$repo" && cargo build --release --workspace)
fi

programs=("$@")
if [[ ${#programs[@]} -eq 0 ]]; then
    for source in "$repo"/c_tests/corpus/*.hip; do
        name="$(basename "$source" .hip)"
        # mfma uses CDNA3 builtins: gfx942 only, which Debian's hipcc cannot target.
        [[ "$name" == mfma ]] || programs+=("$name")
    done
fi

compared=()
skipped=()
for source_name in "${programs[@]}"; do
    for opt in O3 O0; do
        name="$source_name-$opt"
        exe="$out/$name"
        if [[ ! -x "$exe" || "$repo/c_tests/corpus/$source_name.hip" -nt "$exe" ]]; then
            # ROCm 5.2's headers lack some newer device functions: such a program is skipped.
            if ! HIP_PLATFORM=amd HIP_PATH=/usr ROCM_PATH=/usr \
                hipcc --offload-arch=gfx90a "-$opt" -I "$repo/c_tests" \
                "$repo/c_tests/corpus/$source_name.hip" -o "$exe.partial" 2>"$out/$name.build.err"; then
                echo "== $name: Debian's hipcc cannot build it (see $out/$name.build.err); skipped" >&2
                skipped+=("$name")
                continue
            fi
            mv "$exe.partial" "$exe"
        fi
        echo "== $name" >&2
        timeout 900 "$hipshim" compare -- "$exe" >"$out/$name.txt" 2>"$out/$name.err" ||
            echo "   hipshim compare failed ($?): see $out/$name.err" >&2
        compared+=("$name")
    done
done

# One line per differing field: programs showing it, then an example (AMD | hipshim).
for name in "${compared[@]}"; do
    awk -v prog="$name" '
        /^ *dispatch +kernel/ { table = 1; next }
        table && NF >= 4 {
            # dispatch, kernel, then the field (one or more words), AMD value, hipshim value
            field = $3; for (i = 4; i <= NF - 2; i++) field = field " " $i
            print field "\t" prog "\t" $(NF - 1) "\t" $NF
        }
        /^(AMD CLR|hipshim) / { print "#counts\t" prog "\t" $0 }
    ' "$out/$name.txt"
done >"$out/differences.tsv"

{
    echo "programs compared: ${#compared[@]} (${compared[*]})"
    [[ ${#skipped[@]} -eq 0 ]] || echo "skipped, Debian's hipcc cannot build them: ${skipped[*]}"
    echo
    echo "counts (runtime, dispatches, barriers, copies, queues, doorbells):"
    awk -F'\t' '$1 == "#counts" { printf "  %-16s %s\n", $2, $3 }' "$out/differences.tsv"
    echo
    printf "%-28s %9s  %s\n" "field" "programs" "example (AMD CLR | hipshim)"
    awk -F'\t' '$1 != "#counts" {
            if (!(($1, $2) in seen)) { seen[$1, $2] = 1; n[$1]++ }
            if (!($1 in example)) example[$1] = $3 " | " $4
        }
        END { for (f in n) printf "%-28s %9d  %s\n", f, n[f], example[f] }' \
        "$out/differences.tsv" | sort
} | tee "$out/summary.txt"
