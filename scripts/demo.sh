#!/usr/bin/env bash
# The walking skeleton, end to end: build hipshim and hsasim, compile
# c_tests/vector_add.hip with stock clang-19 against hip_headers/ (fat binary
# for gfx942 + gfx90a), and run it. With no AMD GPU the shim serves it from
# the software GPU and says so on stderr.
#
# Usage: scripts/demo.sh          (after scripts/setup.sh)
# Env:   HSASIM_GFX=gfx90a to run on the CDNA2 model; HIPSHIM_LOG=debug to
#        watch API calls, =trace for packets and doorbells.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"

echo "== building hipshim (libamdhip64.so) and hsasim (libhsasim.so)"
cargo build --workspace

echo "== staging the lib dir"
lib_dir="$(scripts/stage-libs.sh debug)"
ls -l "$lib_dir"

echo "== compiling c_tests/vector_add.hip with clang-19"
program="$target/demo/vector_add"
scripts/build-hip.sh c_tests/vector_add.hip "$program" gfx942 gfx90a

echo "== running $program (HSASIM_GFX=${HSASIM_GFX:-gfx942 (default)})"
status=0
"$program" || status=$?
if [[ $status -eq 0 ]]; then
    echo "== demo: vector_add ran on hipshim and checked every element"
else
    echo "== demo: vector_add FAILED with exit status $status" >&2
fi
exit "$status"
