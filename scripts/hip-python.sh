#!/usr/bin/env bash
# Create (idempotently) a Python virtual environment with AMD's HIP Python bindings
# (hip-python, from PyPI), which tests/hip_python.rs drives hipshim through. The version is
# pinned: a self-contained build for ROCm 6.2 that dlopens libamdhip64.so (and libhiprtc.so)
# by name, as any program of that ABI would.
#
# Usage: scripts/hip-python.sh [DIR]
#   DIR defaults to ${CARGO_TARGET_DIR:-<repo>/target}/hip-python-venv.
# Prints DIR on stdout; needs python3 with the venv module (Debian: python3-venv) and PyPI.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-${CARGO_TARGET_DIR:-$repo/target}/hip-python-venv}"
version="6.2.0.499.16"

if [[ -x "$dir/bin/python" ]] &&
    "$dir/bin/python" -c "import sys, importlib.metadata as m; sys.exit(m.version('hip-python') != '$version')" 2>/dev/null; then
    echo "$dir"
    exit 0
fi
python3 -m venv "$dir" >&2
"$dir/bin/pip" install --quiet --disable-pip-version-check "hip-python==$version" >&2
echo "$dir"
