#!/usr/bin/env bash
# Build the release packages: everything a user needs to run HIP programs on hipshim, with no
# checkout, no cargo and no script at run time.
#
#   scripts/package.sh        writes into <target>/package/:
#     hipshim-VERSION-x86_64-linux-gnu.tar.gz   relocatable; unpack anywhere:
#       hipshim-VERSION/bin/hipshim
#       hipshim-VERSION/lib/hipshim/            the lib dir (put it on LD_LIBRARY_PATH)
#       hipshim-VERSION/include/hip/            the HIP headers hipshim implements
#       hipshim-VERSION/share/doc/hipshim/      README, CHANGELOG, LICENSE, the guide
#     hipshim_VERSION-1_amd64.deb               the same files as /usr/bin/hipshim,
#       /usr/lib/x86_64-linux-gnu/hipshim/ (lib dir, headers in its include/) and
#       /usr/share/doc/hipshim/: beside AMD's packages, never over their files.
#
# The lib dir is what scripts/stage-libs.sh stages for the release build (the one place that
# knows its names), with each library stored once and every other name a relative symlink.
# `hipshim` finds it relative to itself (cli/src/libdir.rs).
# Needs cargo-deb ('scripts/setup.sh --package' installs it), strip and tar.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
out="$target/package"

if [[ "$(uname -m)" != x86_64 ]]; then
    echo "package: only x86_64 packages are made (this is $(uname -m))" >&2
    exit 1
fi
if ! cargo deb --version >/dev/null 2>&1; then
    echo "package: cargo-deb is missing: run 'scripts/setup.sh --package'" >&2
    exit 1
fi

version="$(cargo pkgid -p hipshim-cli | sed 's/.*[#@]//')"
name="hipshim-$version"
tarball="$out/$name-x86_64-linux-gnu.tar.gz"
deb="$out/hipshim_${version}-1_amd64.deb"

echo "package: building hipshim $version (release)" >&2
cargo build --release -p hipshim -p hsasim -p hipshim-cli
staged="$(scripts/stage-libs.sh release)"

# The tree both packages are made from. Under target/release/ because cargo-deb reads its
# assets from there wherever the target dir is (cli/Cargo.toml, [package.metadata.deb]).
tree="$target/release/package-tree"
rm -rf "$tree"
mkdir -p "$tree/bin" "$tree/lib/hipshim" "$tree/include" "$tree/share/doc/hipshim"

# ship_lib_dir SRC DST: copy the staged lib dir. A name whose link leaves SRC (into the
# profile dir) becomes the real library, stored once under the library's own name; the
# other names link to it, relatively, so the directory works wherever it is unpacked.
ship_lib_dir() {
    local src="$1" dst="$2" rel link_dir points_to real base
    while IFS= read -r rel; do
        rel="${rel#./}"
        link_dir="$(dirname "$rel")"
        mkdir -p "$dst/$link_dir"
        if [[ -L "$src/$rel" ]]; then
            points_to="$(realpath -m -s "$src/$link_dir/$(readlink "$src/$rel")")"
            if [[ "$points_to" == "$src"/* ]]; then
                cp -P "$src/$rel" "$dst/$rel"
                continue
            fi
        fi
        real="$(realpath "$src/$rel")"
        base="$(basename "$real")"
        if [[ ! -f "$dst/$base" ]]; then
            install -m 644 "$real" "$dst/$base"
            strip --strip-unneeded "$dst/$base"
        fi
        if [[ "$rel" != "$base" ]]; then
            ln -sfn "$(realpath -m -s --relative-to="$dst/$link_dir" "$dst/$base")" "$dst/$rel"
        fi
    done < <(cd "$src" && find . -mindepth 1 \( -type l -o -type f \) | LC_ALL=C sort)
}
ship_lib_dir "$(realpath -s "$staged")" "$tree/lib/hipshim"

install -m 755 "$target/release/hipshim" "$tree/bin/hipshim"
strip --strip-unneeded "$tree/bin/hipshim"
cp -r hip_headers/hip "$tree/include/hip"
for doc in README.md CHANGELOG.md LICENSE docs; do
    if [[ -e "$doc" ]]; then
        cp -r "$doc" "$tree/share/doc/hipshim/"
    else
        echo "package: warning: $doc is missing; the packages ship without it" >&2
    fi
done
find "$tree" -type d -exec chmod 755 {} +
find "$tree" -type f ! -path "$tree/bin/*" -exec chmod 644 {} +

mkdir -p "$out"
rm -f "$tarball" "$deb"
# Reproducible: fixed owner, order and time (the last commit's, else the epoch).
mtime="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
tar -C "$tree" --transform "s,^\.,$name,S" --owner=0 --group=0 --numeric-owner \
    --sort=name --mtime="@$mtime" -czf "$tarball" .
# The tree's binaries are already stripped; cargo-deb packs them as they are.
cargo deb -p hipshim-cli --no-build --no-strip --output "$deb" >&2

echo "package: $tarball" >&2
echo "package: $deb" >&2
echo "$out"
