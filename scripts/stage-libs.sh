#!/usr/bin/env bash
# Stage the "lib dir": one directory from which HIP programs load hipshim.
#
#   <target>/<profile>/hipshim-lib/
#     libamdhip64.so, libamdhip64.so.5, .6, .7  -> ../libamdhip64.so
#     libhiprtc.so, libhiprtc.so.5, .6, .7      -> ../libamdhip64.so
#     libhsasim.so                              -> ../libhsasim.so
#     as-rocr/libhsa-runtime64.so.1             -> ../libhsasim.so
#   (or ../deps/..., where `cargo test` leaves the cdylibs)
#
# Programs linked with -lamdhip64 record NEEDED libamdhip64.so.6 (ours) or
# libamdhip64.so.5 (Debian's hipcc), so every soname must answer here; the shim
# looks for libhsasim.so next to the libamdhip64.so* it was loaded from.
# ROCm 6 and 7 programs using hiprtc also record NEEDED libhiprtc.so.6/.7: AMD's
# libhiprtc exports the hiprtc* names unversioned (its version script has no
# node), and an unversioned reference binds to our default-versioned
# definitions, so the same library answers. The loader maps it once: both
# names lead to one file.
#
# AMD's own libamdhip64 over hsasim (`hipshim compare`, `bench ops --amd`) loads ROCr by
# its soname: as-rocr/ answers to it. Staged here so that an installed, read-only lib dir
# (scripts/package.sh ships this directory) has it too.
#
# Usage: scripts/stage-libs.sh [PROFILE]     (PROFILE defaults to debug)
#   The target dir is $CARGO_TARGET_DIR, else <repo>/target. Build first
#   (cargo build --workspace). Prints the lib dir on stdout.
# This is the only place that knows the layout; tests/common calls it.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
profile="${1:-debug}"
profile_dir="${CARGO_TARGET_DIR:-$repo/target}/$profile"
lib_dir="$profile_dir/hipshim-lib"

# Where cargo put each cdylib: `cargo build` links it into the profile dir,
# `cargo test` leaves it in deps/ (which is never older than the profile-dir
# copy, since that is linked from it). Prints the path relative to the lib dir.
locate() {
    local deps="$profile_dir/deps/$1" top="$profile_dir/$1"
    if [[ -f "$deps" && ! "$top" -nt "$deps" ]]; then
        echo "../deps/$1"
    elif [[ -f "$top" ]]; then
        echo "../$1"
    else
        echo "stage-libs: $1 is not built in $profile_dir (nor its deps/): run" \
            "'cargo test --workspace' or 'cargo build --workspace' first" >&2
        return 1
    fi
}
hip_lib="$(locate libamdhip64.so)"
sim_lib="$(locate libhsasim.so)"

# link NAME TARGET: make $lib_dir/NAME point at TARGET, writing only if needed.
link() {
    if [[ "$(readlink "$lib_dir/$1" 2>/dev/null || true)" != "$2" ]]; then
        ln -sfn "$2" "$lib_dir/$1"
    fi
}

[[ -d "$lib_dir" ]] || mkdir -p "$lib_dir"
for name in libamdhip64.so libamdhip64.so.5 libamdhip64.so.6 libamdhip64.so.7 \
    libhiprtc.so libhiprtc.so.5 libhiprtc.so.6 libhiprtc.so.7; do
    link "$name" "$hip_lib"
done
link libhsasim.so "$sim_lib"
[[ -d "$lib_dir/as-rocr" ]] || mkdir -p "$lib_dir/as-rocr"
link as-rocr/libhsa-runtime64.so.1 ../libhsasim.so
echo "$lib_dir"
