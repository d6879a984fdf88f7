#!/usr/bin/env bash
# How much faster hsasim's interpreter is than it was when issue 15 began, on this host: the
# benchmark as first committed with its fixed kernel set (ae136a0; its kernels in
# `interp.hip` have not changed since) against the working tree's, one worker each, pinned to
# one CPU and run alternately, so both see the same host. Absolute lane-instructions/s move
# with the host (2x between calls on shared cloud machines); the ratio is what carries over.
#
# Usage: scripts/interp-baseline.sh [-r ROUNDS] [-c CPU] [-k KERNELS] [-B BASE_BIN -N NEW_BIN]
#   -r ROUNDS   alternated rounds; each prints its best of 2 timed runs (default 3)
#   -c CPU      the CPU both run on (default 0)
#   -k KERNELS  comma-separated benchmark kernels (default: all seven)
#   -B/-N       prebuilt benchmark binaries (then nothing is built; set
#               HSASIM_ISA_BENCH_CODE_OBJECT on hosts without clang, as docs/dev/benchmarks.md says)
# Without -B/-N the base is built from BASE_REV (default ae136a0) in a git worktree under
# target/interp-baseline/ and the working tree's benchmark with `cargo bench --no-run`.
set -euo pipefail

rounds=3
cpu=0
kernels=""
base_bin=""
new_bin=""
while getopts "r:c:k:B:N:h" opt; do
    case "$opt" in
        r) rounds="$OPTARG" ;;
        c) cpu="$OPTARG" ;;
        k) kernels="$OPTARG" ;;
        B) base_bin="$OPTARG" ;;
        N) new_bin="$OPTARG" ;;
        *) sed -n '2,16p' "$0"; exit 2 ;;
    esac
done

bench_of() { # dir target-dir: the benchmark executable cargo builds there
    (cd "$1" && CARGO_TARGET_DIR="$2" cargo bench -p hsasim-isa --bench interp --no-run \
        --message-format=json 2>/dev/null | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
}

if [[ -n "$base_bin" && -z "$new_bin" || -z "$base_bin" && -n "$new_bin" ]]; then
    echo "interp-baseline: -B and -N go together" >&2
    exit 2
fi
if [[ -z "$base_bin" ]]; then
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    target="${CARGO_TARGET_DIR:-$repo/target}"
    work="$target/interp-baseline"
    rev="${BASE_REV:-ae136a0}"
    if [[ ! -d "$work/src" ]]; then
        mkdir -p "$work"
        # A worktree deleted with the target directory (cargo clean) is still registered.
        git -C "$repo" worktree prune
        git -C "$repo" worktree add --quiet --detach "$work/src" "$rev" >/dev/null
    fi
    # An existing worktree follows BASE_REV too.
    git -C "$work/src" checkout --quiet --detach "$rev"
    base_bin="$(bench_of "$work/src" "$work/target")"
    new_bin="$(bench_of "$repo" "$target")"
    for b in "$base_bin" "$new_bin"; do
        [[ -x "$b" ]] || { echo "interp-baseline: could not build the benchmarks" >&2; exit 1; }
    done
fi

run() { # binary: "kernel rate" lines of its one-worker summary
    local env=(HSASIM_ISA_BENCH_THREADS=1 HSASIM_ISA_BENCH_REPS=2)
    [[ -n "$kernels" ]] && env+=(HSASIM_ISA_BENCH_KERNELS="$kernels")
    env "${env[@]}" taskset -c "$cpu" "$1" --bench 2>&1 |
        sed -n '/^summary/,$p' | tail -n +2 | awk '{ print $1, $2 }'
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
    run "$base_bin" | sed 's/^/base /' >> "$tmp/all"
    run "$new_bin" | sed 's/^/new /' >> "$tmp/all"
done
printf '%-14s %12s %12s %8s   %s\n' kernel "base M/s" "new M/s" ratio "new, each round"
awk '{ k = $2; v = $3 + 0
       if ($1 == "base") { if (v > b[k]) b[k] = v }
       else { if (v > n[k]) n[k] = v; each[k] = each[k] " " int(v) } }
     END { for (k in n) printf "%-14s %12.0f %12.0f %7.1fx  %s\n", k, b[k], n[k], n[k] / b[k], each[k] }' \
    "$tmp/all" | sort
echo "(best of $rounds alternated rounds, one worker on CPU $cpu, M lane-instructions/s)"
