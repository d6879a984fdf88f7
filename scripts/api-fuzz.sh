#!/usr/bin/env bash
# The long run of the API-sequence fuzzer (tests/api_fuzz.rs): random HIP call sequences
# through the built libamdhip64.so on hsasim, every return code and buffer checked.
#
#   scripts/api-fuzz.sh [--calls N] [--seed S] [--threads T] [--runs R] [--without faults,pool,unload] [--fail SPEC] [--release]
#
# N calls in all (split over T threads, 1..4) per run; R runs with seeds S, S+1, ...
# (default 1). --fail SPEC runs under HSASIM_FAIL=SPEC (hsasim fails chosen HSA calls on
# purpose, e.g. all:p=0.02:seed=1; docs/guide/hsasim.md): the fuzzer retries a call that
# returns hipErrorOutOfMemory and forgets what it knew of every buffer.
# A finding prints the replay file; copy its `-finding.replay` into
# tests/api_fuzz/corpus/ to keep it as a regression. Replay one file with
#   HIPSHIM_API_FUZZ_REPLAY=FILE cargo test -p hipshim --test api_fuzz api_fuzz_runs -- --nocapture
set -euo pipefail

calls=1000000
seed=1
threads=1
runs=1
without=
fail=
profile=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --calls) calls="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --without) without="$2"; shift 2 ;;
        --fail) fail="$2"; shift 2 ;;
        --release) profile=(--release); shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "api-fuzz.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

cd "$(dirname "$0")/.."
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"
# The test stages the libraries it loads; make sure the simulator library is current too.
cargo build -q "${profile[@]}" -p hsasim
if [[ -n "$fail" ]]; then
    export HSASIM_FAIL="$fail"
fi
for ((i = 0; i < runs; i++)); do
    s=$((seed + i))
    echo "api-fuzz: run $((i + 1))/$runs: seed $s, $calls calls, $threads thread(s)${fail:+, HSASIM_FAIL=$fail}"
    HIPSHIM_API_FUZZ_CALLS="$calls" HIPSHIM_API_FUZZ_SEED="$s" \
        HIPSHIM_API_FUZZ_THREADS="$threads" HIPSHIM_API_FUZZ_WITHOUT="$without" \
        cargo test -q "${profile[@]}" -p hipshim --test api_fuzz api_fuzz_runs -- --nocapture
done
