#!/usr/bin/env bash
# Puts an nsys-gate binary for this runner in the tool cache and writes its path to the step's
# `path` output: the prebuilt release binary for the action's version when one is published
# (checked against its published SHA-256), otherwise a build of the action's own source with
# `cargo build --release --locked`. Either is cached between runs.
set -euo pipefail

action_dir=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: run this as part of the nsys-gate action}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_dir/Cargo.toml" | head -n 1)
os=$(uname -s | tr '[:upper:]' '[:lower:]')
arch=$(uname -m)
case "$arch" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
esac
target="$arch-unknown-$os-musl"
cache_root=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/nsys-gate

say() { echo "nsys-gate action: $*" >&2; }
output() { echo "path=$1" >> "${GITHUB_OUTPUT:-/dev/null}"; echo "$1"; }

# 1. A published release binary for exactly this version (only for a released action).
release_dir="$cache_root/$version-release/$target"
if [ -x "$release_dir/nsys-gate" ]; then
  say "using cached release binary $release_dir/nsys-gate"
  output "$release_dir/nsys-gate"
  exit 0
fi
repository=${GITHUB_ACTION_REPOSITORY:-}
if [ -n "$repository" ] && [ "${GITHUB_ACTION_REF:-}" = "v$version" ] && command -v curl >/dev/null; then
  server=${GITHUB_SERVER_URL:-https://github.com}
  asset="nsys-gate-$version-$target.tar.gz"
  url="$server/$repository/releases/download/v$version/$asset"
  tmp=$(mktemp -d)
  if curl -fsSL --retry 3 -o "$tmp/$asset" "$url" && curl -fsSL --retry 3 -o "$tmp/$asset.sha256" "$url.sha256"; then
    expected=$(awk '{print $1; exit}' "$tmp/$asset.sha256")
    actual=$(sha256sum "$tmp/$asset" | awk '{print $1}')
    if [ -n "$expected" ] && [ "$expected" = "$actual" ]; then
      mkdir -p "$release_dir"
      tar -xzf "$tmp/$asset" -C "$release_dir" nsys-gate
      rm -rf "$tmp"
      say "installed release binary $version ($target), SHA-256 $actual"
      output "$release_dir/nsys-gate"
      exit 0
    fi
    say "the published SHA-256 of $asset does not match ($expected != $actual); building from source instead"
  else
    say "no release binary $asset for $version; building from source"
  fi
  rm -rf "$tmp"
fi

# 2. The action's own source, built once per source tree and cached.
source_hash=$(cd "$action_dir" && find Cargo.toml Cargo.lock src templates -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
build_dir="$cache_root/$version-$source_hash/$target"
if [ -x "$build_dir/nsys-gate" ]; then
  say "using cached build $build_dir/nsys-gate"
  output "$build_dir/nsys-gate"
  exit 0
fi
if ! command -v cargo >/dev/null; then
  say "no prebuilt binary for $version on $target and no Rust toolchain to build one."
  say "Install Rust on the runner (https://rustup.rs: 'curl https://sh.rustup.rs -sSf | sh -s -- -y', then add ~/.cargo/bin to PATH),"
  say "or use a released version of the action (uses: OWNER/nsys-gate@vX.Y.Z) that ships binaries."
  exit 1
fi
say "building nsys-gate $version from source (cargo build --release --locked); this happens once per version"
cargo build --release --locked --manifest-path "$action_dir/Cargo.toml" --target-dir "$cache_root/target" >&2
mkdir -p "$build_dir"
cp "$cache_root/target/release/nsys-gate" "$build_dir/nsys-gate"
say "built $build_dir/nsys-gate"
output "$build_dir/nsys-gate"
