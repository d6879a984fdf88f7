#!/usr/bin/env bash
# How well hsasim's interpreter scales across workers, measured against what the host itself
# gives (issue 15). For each kernel of the interpreter benchmark it runs:
#   lone      one process, one worker, nothing else running
#   workers   one process with W workers (the benchmark's own scaling figure)
#   host      W processes of one worker each, all at once: they share nothing, so what they
#             reach together is the most W busy cores of this host deliver to this code
# and prints the speedups over `lone` and the workers' share of the host's ceiling. On a
# virtual machine or a host with SMT, `host` can stay well below W x `lone`; then the
# efficiency the benchmark prints (workers / (W x lone)) mixes the interpreter's own losses
# with the host's, and `workers / host` is the interpreter's part.
#
# Usage: scripts/interp-scaling.sh [-w W] [-k KERNELS] [-s SCALE] [-r REPS] [-b BENCH_BINARY]
#   -w W        workers and processes (default: nproc)
#   -k KERNELS  comma-separated benchmark kernels (default: matmul_naive,saxpy,fma_chain)
#   -s SCALE    HSASIM_ISA_BENCH_SCALE (default 4: runs long enough to overlap)
#   -r REPS     timed runs per figure (default 3; each process reports its best)
#   -b BINARY   a built benchmark (default: built here with `cargo bench --no-run`); with
#               HSASIM_ISA_BENCH_CODE_OBJECT set, a copy runs on another host without Rust
set -euo pipefail

workers="$(nproc)"
kernels="matmul_naive,saxpy,fma_chain"
scale=4
reps=3
bench=""
while getopts "w:k:s:r:b:h" opt; do
    case "$opt" in
        w) workers="$OPTARG" ;;
        k) kernels="$OPTARG" ;;
        s) scale="$OPTARG" ;;
        r) reps="$OPTARG" ;;
        b) bench="$OPTARG" ;;
        *) sed -n '2,20p' "$0"; exit 2 ;;
    esac
done

if [[ -z "$bench" ]]; then
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    bench="$(cd "$repo" && cargo bench -p hsasim-isa --bench interp --no-run --message-format=json 2>/dev/null |
        sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)"
    [[ -x "$bench" ]] || { echo "interp-scaling: could not build the benchmark" >&2; exit 1; }
fi

# M lane-instructions/s of the row for `w` workers in one benchmark run's output.
rate_of() { awk -v w="$1" '$1 == w && $2 ~ /s$/ { print $4; exit }'; }

run() { # workers kernel
    HSASIM_ISA_BENCH_THREADS="$1" HSASIM_ISA_BENCH_KERNELS="$2" HSASIM_ISA_BENCH_SCALE="$scale" \
        HSASIM_ISA_BENCH_REPS="$reps" "$bench"
}

printf '%-14s %10s %10s %10s %9s %9s %12s\n' kernel "lone" "workers" "host" "workers" "host" "workers/host"
printf '%-14s %10s %10s %10s %9s %9s %12s\n' "" "M lane/s" "M lane/s" "M lane/s" "speedup" "speedup" ""
IFS=, read -ra list <<< "$kernels"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for k in "${list[@]}"; do
    lone="$(run 1 "$k" | rate_of 1)"
    together="$(run "$workers" "$k" | rate_of "$workers")"
    for i in $(seq "$workers"); do
        run 1 "$k" > "$tmp/$i.out" &
    done
    wait
    host="$(for i in $(seq "$workers"); do rate_of 1 < "$tmp/$i.out"; done | awk '{ s += $1 } END { print s }')"
    awk -v k="$k" -v l="$lone" -v t="$together" -v h="$host" -v w="$workers" 'BEGIN {
        printf "%-14s %10.0f %10.0f %10.0f %8.1fx %8.1fx %11.0f%%\n", k, l, t, h, t / l, h / l, 100 * t / h
    }'
done
echo "(W = $workers; speedups over one lone worker; ideal is ${workers}x)"
