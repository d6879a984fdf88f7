#!/bin/sh
# Differential test of hsasim's interpreter against host evaluation (issue 15):
#   scripts/difftest.sh [PROGRAMS [FIRST_SEED [STATEMENTS]]]
# runs PROGRAMS random kernels per target (gfx942 and gfx90a; default 1000) from
# FIRST_SEED (default 1000, past the CI run's seeds 0..39) with STATEMENTS top-level
# statements (default 60). Reports and reduced programs land in $TMPDIR/hsasim-difftest/.
set -e
cd "$(dirname "$0")/.."
HSASIM_DIFFTEST_PROGRAMS="${1:-1000}" \
HSASIM_DIFFTEST_SEED="${2:-1000}" \
HSASIM_DIFFTEST_LEN="${3:-60}" \
exec cargo test -p hsasim-isa --test difftest random_programs_match_the_host -- --nocapture
