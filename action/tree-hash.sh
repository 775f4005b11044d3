#!/usr/bin/env bash
# Prints the SHA-256 of the source tree an nsys-gate binary is built from: the files under
# Cargo.toml, Cargo.lock, src/, crates/ (the workspace's other crates) and templates/ of DIR (default: this action's folder), each as
# "SHA-256  path" in byte order of the path, hashed together. A release publishes this hash
# (nsys-gate-VERSION-source-tree.txt, written by scripts/package-release.sh) beside its
# archives; action/install.sh compares it with the hash of the action's own checkout to decide
# whether the release binary is a build of exactly this tree.
set -euo pipefail
dir=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"}
cd "$dir"
for item in Cargo.toml Cargo.lock src crates templates; do
  if [ ! -e "$item" ]; then
    echo "tree-hash: $dir has no $item: not an nsys-gate source tree" >&2
    exit 1
  fi
done
find Cargo.toml Cargo.lock src crates templates -type f -print0 \
  | LC_ALL=C sort -z \
  | xargs -0 sha256sum \
  | sha256sum \
  | cut -d' ' -f1
