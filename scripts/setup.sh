#!/usr/bin/env bash
# One-time set-up of a Debian 12 (bookworm) machine for hipshim. Idempotent.
#
#   sudo scripts/setup.sh [--package]      (or as root)
#
# - installs the toolchain from Debian's own archive (skipped when present):
#     clang-19 lld-19 llvm-19 clang-tools-19  stock clang that compiles HIP
#     rocm-device-libs                        device bitcode (ockl/ocml/oclc)
#     libamdhip64-dev libhsa-runtime-dev hipcc rocminfo
#                                             AMD's ROCm 5.2 stack: the
#                                             "existing binary" tests build with
#                                             Debian's hipcc
#     binutils                                readelf/objdump used by tests
#     valgrind                                callgrind: `hipshim bench ops` counts
#                                             instructions per operation with it
#     librocsparse0 librocrand1 librocsparse-dev librocrand-dev
#                                             AMD-built gfx90a kernels (and their
#                                             headers) for the real-world tests
#     python3-venv                            the virtual environment with AMD's
#                                             hip-python (a real client's test)
#     librocprim-dev libgtest-dev             rocPRIM's headers and googletest:
#                                             rocPRIM's own tests as a conformance
#                                             suite (scripts/rocprim-conformance.sh)
#     openmpi-bin libopenmpi-dev              mpirun and mpicxx: HIP programs under MPI
#                                             (cli/tests/mpi.rs)
# - creates target/hip-python-venv with AMD's hip-python from PyPI
#   (scripts/hip-python.sh), owned by the invoking user;
# - creates the device-library directory with the gfx942 workaround
#   (scripts/hip-devlibs.sh -> target/hip-devlibs), owned by the invoking
#   user, so tests later run without root;
# - checks for a Rust toolchain (cargo, and rustc at least the workspace's
#   `rust-version` in Cargo.toml), which it does not install;
# - with --package, installs cargo-deb (pinned, from crates.io; skipped when
#   that version is present) for scripts/package.sh.
set -euo pipefail

with_packaging=0
for arg in "$@"; do
    case "$arg" in
        --package) with_packaging=1 ;;
        *) echo "usage: $0 [--package]" >&2; exit 2 ;;
    esac
done

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
packages=(clang-19 lld-19 llvm-19 clang-tools-19 rocm-device-libs
    libamdhip64-dev libhsa-runtime-dev hipcc rocminfo binutils valgrind
    librocsparse0 librocrand1 librocsparse-dev librocrand-dev python3-venv
    librocprim-dev libgtest-dev openmpi-bin libopenmpi-dev)

installed() {
    [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "setup: toolchain packages already installed"
else
    echo "setup: installing ${missing[*]}"
    as_root=()
    if [[ $EUID -ne 0 ]]; then
        if command -v sudo >/dev/null; then
            as_root=(sudo)
        else
            echo "setup: installing packages needs root: run 'sudo $0' (or as root)" >&2
            exit 1
        fi
    fi
    "${as_root[@]}" apt-get update
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

# Files under the repo belong to the user who owns the checkout, even when
# this script runs under sudo.
as_owner=()
if [[ $EUID -eq 0 && -n "${SUDO_USER:-}" && "$SUDO_USER" != root ]]; then
    as_owner=(sudo -u "$SUDO_USER" --preserve-env=CARGO_TARGET_DIR)
fi
devlibs="$("${as_owner[@]}" "$repo/scripts/hip-devlibs.sh")"
echo "setup: device libraries (with gfx942) in $devlibs"
# Debian's python3 (a pyenv or other python3 first on PATH may lack the venv module).
venv="$("${as_owner[@]}" env PATH="/usr/bin:$PATH" "$repo/scripts/hip-python.sh")"
echo "setup: hip-python in $venv"

# Rust: assumed present (Debian 12's rustc is too old for this workspace).
rust_ok=1
for tool in cargo rustc; do
    if ! "${as_owner[@]}" bash -lc "command -v $tool" >/dev/null 2>&1; then
        rust_ok=0
    fi
done
if [[ $rust_ok -eq 0 ]]; then
    cat >&2 <<'MSG'
setup: no Rust toolchain (cargo/rustc) found. It is not installed by this
script. Install it for your user with rustup, then open a new shell:
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y
MSG
    exit 1
fi
# The oldest rustc the workspace builds with is declared once, in Cargo.toml.
rust_needed="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)"
rustc_version="$("${as_owner[@]}" bash -lc 'rustc --version')"
rust_have="$(echo "$rustc_version" | awk '{print $2}')"
rust_have="${rust_have%%-*}"
if [[ -z "$rust_needed" ]]; then
    echo "setup: Cargo.toml declares no rust-version" >&2
    exit 1
fi
if [[ "$(printf '%s\n%s\n' "$rust_needed" "$rust_have" | sort -V | head -1)" != "$rust_needed" ]]; then
    cat >&2 <<MSG
setup: $rustc_version is older than this workspace's rust-version ($rust_needed).
Update the toolchain (rustup keeps it for your user), then run setup again:
    rustup update stable
MSG
    exit 1
fi
echo "setup: $rustc_version (workspace needs >= $rust_needed)"

# cargo-deb makes the .deb in scripts/package.sh. Pinned: its output is part of the release.
# Only with --package: the demo and the tests do not need it, and building it takes minutes.
cargo_deb_version=3.8.0
if [[ $with_packaging -eq 0 ]]; then
    echo "setup: cargo-deb (for scripts/package.sh) not checked: run 'scripts/setup.sh --package' to install it"
elif [[ "$("${as_owner[@]}" bash -lc 'cargo deb --version 2>/dev/null' || true)" == *" $cargo_deb_version"* ]]; then
    echo "setup: cargo-deb $cargo_deb_version already installed"
else
    echo "setup: installing cargo-deb $cargo_deb_version (cargo install, a few minutes)"
    "${as_owner[@]}" bash -lc "cargo install cargo-deb --version $cargo_deb_version --locked"
fi
echo "setup: done. Next: scripts/demo.sh (a four-stream program under two queue policies)" \
    "or 'cargo test --workspace'"
