#!/usr/bin/env bash
# Builds nsys-gate and lays out one release's files the way the action downloads them:
#
#   OUTDIR/vVERSION/nsys-gate-VERSION-OS-ARCH.tar.gz          the binary, README.md, CHANGELOG.md
#   OUTDIR/vVERSION/nsys-gate-VERSION-OS-ARCH.tar.gz.sha256   its SHA-256, in `sha256sum` format
#   OUTDIR/vVERSION/nsys-gate-VERSION-source-tree.txt         the hash of the source tree built
#
# which is the shape of GitHub's `releases/download/vVERSION/FILE` URLs: point the action's
# `release-url` input at a server (or `file://` folder) holding OUTDIR and it installs from
# there. The release workflow (.github/workflows/release.yml) runs this for each target and
# uploads the files; run it yourself to fill a mirror for GitHub Enterprise Server or an
# air-gapped network.
#
# Usage: scripts/package-release.sh OUTDIR [--target TRIPLE]
#   --target TRIPLE  build for TRIPLE (default: this machine's host target). Release builds
#                    use x86_64-unknown-linux-musl and aarch64-unknown-linux-musl, which run
#                    on any Linux; a host build needs the glibc it was built against or newer.
# Honours CARGO_TARGET_DIR (where cargo builds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() { sed -n '16,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
outdir=""
target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) [ $# -ge 2 ] || usage; target=$2; shift 2 ;;
    --target=*) target=${1#--target=}; shift ;;
    -h|--help) usage ;;
    -*) echo "package-release: unknown option $1" >&2; usage ;;
    *) [ -z "$outdir" ] || usage; outdir=$1; shift ;;
  esac
done
[ -n "$outdir" ] || usage

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
host=$(rustc -vV | sed -n 's/^host: //p')
target=${target:-$host}
# OS and architecture from the triple (ARCH-VENDOR-OS[-ENV]), named as `uname` names them on
# the runner so that action/install.sh finds the archive.
arch=${target%%-*}
case "$target" in
  *-linux-*) os=linux ;;
  *-apple-darwin) os=darwin ;;
  *) echo "package-release: no archive name for target $target (Linux and macOS only)" >&2; exit 2 ;;
esac
case "$arch" in
  x86_64|aarch64) ;;
  *) echo "package-release: no archive name for architecture $arch (x86_64 and aarch64 only)" >&2; exit 2 ;;
esac

# The tree hash is taken before the build and checked after it: a file edited meanwhile could
# be in the binary or not, and the published hash would be a guess.
tree=$(action/tree-hash.sh .)
target_dir=${CARGO_TARGET_DIR:-target}
if [ "$target" = "$host" ]; then
  cargo build --profile dist --locked --target-dir "$target_dir" >&2
  binary="$target_dir/dist/nsys-gate"
else
  cargo build --profile dist --locked --target-dir "$target_dir" --target "$target" >&2
  binary="$target_dir/$target/dist/nsys-gate"
fi

release="$outdir/v$version"
name="nsys-gate-$version-$os-$arch"
mkdir -p "$release"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$binary" "$stage/nsys-gate"
cp README.md CHANGELOG.md "$stage/"
# Reproducible: sorted names, fixed owner and time, no gzip timestamp.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00:00Z' \
  -C "$stage" -cf - nsys-gate README.md CHANGELOG.md | gzip -n -9 > "$release/$name.tar.gz"
(cd "$release" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
if [ "$(action/tree-hash.sh .)" != "$tree" ]; then
  echo "package-release: the source tree changed during the build; run it again" >&2
  exit 1
fi
echo "$tree" > "$release/nsys-gate-$version-source-tree.txt"

echo "package-release: nsys-gate $version for $target ($os-$arch) in $release:" >&2
(cd "$release" && ls -l "$name.tar.gz" "$name.tar.gz.sha256" "nsys-gate-$version-source-tree.txt") >&2
