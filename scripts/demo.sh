#!/usr/bin/env bash
# The demo: what hipshim shows that AMD's runtime hides. Builds only what it needs (the
# hipshim and hsasim libraries and the `hipshim` command), compiles demo/streams.hip (four
# streams, each copying in, running two kernels and copying out) with stock clang-19, and
# runs it on the software GPU under two queue policies:
#   single     every stream shares one HSA queue: packets interleave, barriers order them
#   dedicated  a queue per stream: four queues, four doorbells, run side by side
# For each it prints the queue table (packets, kernels, barriers, doorbells per queue) and
# the copy-engine table from `hipshim run --stats`, and writes a Perfetto trace.
#
# Usage: scripts/demo.sh          (after scripts/setup.sh)
# Env:   HSASIM_GFX=gfx90a to run on the CDNA2 model; DEMO_OUT=DIR for the traces
#        (default <target>/demo).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
out="${DEMO_OUT:-$target/demo}"
mkdir -p "$out"

started=$SECONDS
echo "== building hipshim (libamdhip64.so), hsasim (libhsasim.so) and the hipshim command"
cargo build -p hipshim -p hsasim -p hipshim-cli
hipshim="$target/debug/hipshim"
echo "   built in $((SECONDS - started)) s"

echo "== compiling demo/streams.hip with clang-19 (code objects for gfx942 and gfx90a)"
program="$out/streams"
scripts/build-hip.sh demo/streams.hip "$program" gfx942 gfx90a

status=0
for policy in single dedicated; do
    trace="$out/streams-$policy.json"
    stats="$out/streams-$policy.stats.txt"
    echo
    echo "== hipshim run --policy $policy --trace $trace --stats=$stats -- $program"
    if ! "$hipshim" run --policy "$policy" --trace "$trace" --stats="$stats" -- "$program"; then
        echo "== demo: the program FAILED under --policy $policy" >&2
        status=1
        continue
    fi
    # The queue and copy-engine tables: what the policy changed.
    awk '/^Queues$/ {show = 1} /^(Memory pools|Graph launches|Signal waits)/ {show = 0} show' "$stats"
    echo "   Perfetto trace: $trace  (open it at https://ui.perfetto.dev)"
    echo "   all stats tables: $stats"
done

echo
if [[ $status -eq 0 ]]; then
    echo "== demo: the same program ran under two policies; compare the Queue tables above:"
    echo "   'single' put every stream's packets on one queue, 'dedicated' gave each its own."
    echo "   Next: '$hipshim info', and 'docs/guide/policies.md' for choosing a policy."
fi
echo "== demo finished in $((SECONDS - started)) s"
exit "$status"
