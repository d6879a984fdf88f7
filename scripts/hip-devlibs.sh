#!/usr/bin/env bash
# Create (idempotently) the ROCm device-library directory clang uses for HIP:
# symlinks to Debian's amdgcn bitcode plus oclc_isa_version_942.bc, which
# Debian's rocm-device-libs lacks (its newest is 940; gfx942 code only needs the
# ISA-version constant, which 940 provides compatibly).
#
# Usage: scripts/hip-devlibs.sh [DIR]
#   DIR defaults to ${CARGO_TARGET_DIR:-<repo>/target}/hip-devlibs.
# Prints DIR on stdout. Needs no root; the test runner calls it too.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-${CARGO_TARGET_DIR:-$repo/target}/hip-devlibs}"
src="${HIPSHIM_BITCODE_DIR:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}"

if [[ ! -f "$src/ockl.bc" ]]; then
    echo "hip-devlibs: no device libraries in $src (install rocm-device-libs: scripts/setup.sh)" >&2
    exit 1
fi

# link NAME TARGET: make $dir/NAME point at TARGET, writing only when it does
# not already (so a directory set up by root stays usable read-only).
link() {
    if [[ "$(readlink "$dir/$1" 2>/dev/null || true)" != "$2" ]]; then
        ln -sfn "$2" "$dir/$1"
    fi
}

[[ -d "$dir" ]] || mkdir -p "$dir"
for f in "$src"/*.bc; do
    link "$(basename "$f")" "$f"
done
if [[ ! -e "$src/oclc_isa_version_942.bc" ]]; then
    link oclc_isa_version_942.bc "$src/oclc_isa_version_940.bc"
fi
echo "$dir"
