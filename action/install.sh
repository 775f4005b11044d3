#!/usr/bin/env bash
# Puts an nsys-gate binary for this runner in the tool cache and writes its path to the step's
# `path` output.
#
# Which binary (input `install`, in INPUT_INSTALL):
#   auto     (default) the release binary of the action's version when that release was built
#            from exactly this action's source tree (its published source-tree hash equals the
#            hash of the checked-out action, action/tree-hash.sh), otherwise a build of the
#            action's own source: a branch, a local `uses: ./`, an edited copy.
#   release  the release binary of the action's version, whatever the tree.
#   source   a build of the action's own source (`cargo build --profile dist --locked`).
# The ref the workflow used (`@v1`, `@v0.1.0`, a SHA) is not looked at: a composite action's
# steps do not see it (actions/runner issue 2473).
#
# Where releases are (input `release-url`, in INPUT_RELEASE_URL): files are fetched from
# RELEASE_URL/vVERSION/FILE, the shape of GitHub's releases/download URLs and of the folder
# scripts/package-release.sh writes: an https://, http:// or file:// URL, anything else (a
# value beginning with `-` above all, which curl would read as an option) refused. Default:
# the releases of the action's repository on GITHUB_SERVER_URL. A downloaded archive whose SHA-256 is not the published one is an error,
# never a reason to build instead.
#
# Plain http:// (input `release-sha256`, in INPUT_RELEASE_SHA256): the archive and its
# .sha256 come from the same place, so anyone on the network path could serve both. A
# release-url on http:// is refused unless the archive's SHA-256 is pinned; a pinned digest
# (on any scheme) must be the published one, and the archive must have it.
#
# The tool cache (RUNNER_TOOL_CACHE/nsys-gate) is writable by every job on the runner, a fork's
# pull request's included on a self-hosted one, and its paths can be computed: nothing found
# there is run as it is found, nor trusted for a record kept beside it. It keeps release
# archives only: on every use the archive's SHA-256 is compared with the published .sha256,
# fetched again, and the binary is unpacked from a checked copy into a folder of this job's
# own (under RUNNER_TEMP). A source build is never reused across jobs: it is built in this
# job, in a target folder of its own (CARGO_TARGET_DIR when set, else under RUNNER_TEMP).
set -euo pipefail

action_dir=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: run this as part of the nsys-gate action}
# shellcheck source=action/lib.sh
source "$action_dir/action/lib.sh"

started=$SECONDS
install=${INPUT_INSTALL:-auto}
case "$install" in
  auto|release|source) ;;
  *) error "install '$install' is not one of auto, release, source"; exit 2 ;;
esac

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_dir/Cargo.toml" | head -n 1)
os=$(uname -s | tr '[:upper:]' '[:lower:]')
arch=$(uname -m)
case "$arch" in
  amd64) arch=x86_64 ;;
  arm64) arch=aarch64 ;;
esac
asset="nsys-gate-$version-$os-$arch.tar.gz"
tree=$("$action_dir/action/tree-hash.sh" "$action_dir")
cache_root=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/nsys-gate
# The release archive kept for later jobs (checked again on every use).
cached_archive="$cache_root/$version-release/$asset"
# This job's own folder: what is run comes from here.
job_dir=$(mktemp -d "${RUNNER_TEMP:-/tmp}/nsys-gate-install.XXXXXX")

# The releases: the input, else the action's repository on this server (named by the workflow
# expression github.action_repository when the runner fills it, else by the action's folder,
# which the runner names _actions/OWNER/REPO/REF).
release_url=${INPUT_RELEASE_URL:-}
if [ -z "$release_url" ]; then
  repository=${ACTION_REPOSITORY:-}
  if [ -z "$repository" ] && [[ "$action_dir" =~ /_actions/([^/]+)/([^/]+)/[^/]+/?$ ]]; then
    repository="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
  fi
  if [ -n "$repository" ]; then
    release_url="${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download"
  fi
fi
release_url=${release_url%/}
# Only these schemes, checked before curl sees the URL: a value that begins with `-` would be
# read by curl as an option (`-K FILE` reads a config file that can fetch anything anywhere),
# and curl is given `--` before its URL besides.
if [ -n "$release_url" ]; then
  case "$release_url" in
    https://?*|http://?*|file://?*) ;;
    *)
      error "release-url must be an https://, http:// or file:// URL (the folder holding vVERSION/FILE); '$release_url' is not one, so nothing was downloaded."
      exit 2 ;;
  esac
fi
# The pinned SHA-256 of this runner's archive, if any; required on plain http://.
pinned=$(printf '%s' "${INPUT_RELEASE_SHA256:-}" | tr -d '[:space:]' | tr '[:upper:]' '[:lower:]')
if [ -n "$pinned" ] && ! [[ "$pinned" =~ ^[0-9a-f]{64}$ ]]; then
  error "release-sha256 must be a SHA-256 (64 hexadecimal digits, the digest of $asset); '${pinned:0:80}' is not one, so nothing was downloaded."
  exit 2
fi
if [ "$install" != source ] && [[ "$release_url" == http://* ]] && [ -z "$pinned" ]; then
  error "release-url '$release_url' is plain http://: the archive and its .sha256 would both come over it, so anyone on the network path could serve a binary of their own with a matching checksum. Nothing was downloaded. Use an https:// or file:// URL, or pin the archive's SHA-256 with the release-sha256 input (the digest of $asset, taken from a copy you trust)."
  exit 2
fi
base="$release_url/v$version"

use() {
  echo "path=$1" >> "${GITHUB_OUTPUT:-/dev/null}"
  echo "$1"
  exit 0
}

# Fetches URL into FILE; on failure leaves curl's reason in $fetch_error and returns 1.
fetch_error=""
fetch() {
  local url=$1 file=$2
  if ! command -v curl >/dev/null; then
    fetch_error="curl is not installed"
    return 1
  fi
  # A redirect may only lead to https:// (GitHub's releases redirect to their storage), or to
  # http:// from a pinned http:// URL: an https:// release-url cannot be downgraded on the way.
  local redirects='=https'
  [[ "$url" == http://* ]] && redirects='=https,http'
  if ! fetch_error=$(curl -fsSL --proto '=https,http,file' --proto-redir "$redirects" \
      --connect-timeout 10 --max-time 600 \
      --retry 2 --retry-delay 1 -o "$file" -- "$url" 2>&1); then
    fetch_error=${fetch_error:-curl failed}
    return 1
  fi
}

# The binary of the release archive for this runner, in this job's folder: the archive is
# the cached one when its SHA-256 is the published one (the .sha256 fetched again, now), else
# downloaded, checked and kept in the cache for later jobs; the binary is unpacked from this
# job's checked copy. Sets $installed. Returns 1 when the files cannot be fetched; exits when
# a download's checksum is wrong.
installed=""
install_release() {
  local expected actual copy="$job_dir/$asset"
  if ! fetch "$base/$asset.sha256" "$job_dir/$asset.sha256"; then
    return 1
  fi
  expected=$(awk '{print $1; exit}' "$job_dir/$asset.sha256")
  if ! [[ "$expected" =~ ^[0-9a-f]{64}$ ]]; then
    error "the published checksum $base/$asset.sha256 is not a SHA-256 ('${expected:0:64}'); nothing was installed (and nothing was built instead). Check the files at release-url, or set install: source to build the action's source."
    exit 1
  fi
  if [ -n "$pinned" ] && [ "$expected" != "$pinned" ]; then
    error "the published checksum $base/$asset.sha256 says $expected, but release-sha256 pins $pinned: the release files at release-url are not the pinned ones (or the pin is another archive's: it must be the digest of $asset), so nothing was installed (and nothing was built instead)."
    exit 1
  fi
  local origin="from $base/$asset"
  # A copy first: the cache may change under a check of the file itself.
  if [ -f "$cached_archive" ] && cp "$cached_archive" "$copy" 2>/dev/null \
      && [ "$(sha256sum "$copy" | cut -d' ' -f1)" = "$expected" ]; then
    origin="from the tool cache, its SHA-256 checked against $base/$asset.sha256 again"
  else
    if [ -f "$cached_archive" ]; then
      say "the cached archive $cached_archive is not the published one (its SHA-256 differs from $base/$asset.sha256): downloading it again"
    fi
    rm -f "$copy"
    if ! fetch "$base/$asset" "$copy"; then
      return 1
    fi
    actual=$(sha256sum "$copy" | cut -d' ' -f1)
    if [ "$expected" != "$actual" ]; then
      error "the SHA-256 of $base/$asset is $actual, but the published checksum ($base/$asset.sha256) says '${expected:0:64}'. The download is corrupt or the release files were altered, so it was not installed (and nothing was built instead). Re-run the job; if it fails again, check the files at release-url, or set install: source to build the action's source."
      exit 1
    fi
    # Kept for later jobs, whole or not at all (they check it again before any use).
    local staged
    if mkdir -p "$(dirname "$cached_archive")" 2>/dev/null \
        && staged=$(mktemp "$(dirname "$cached_archive")/.archive.XXXXXX" 2>/dev/null); then
      cp "$copy" "$staged" && mv -f "$staged" "$cached_archive" || rm -f "$staged"
    fi
  fi
  mkdir -p "$job_dir/bin"
  if ! tar -xzf "$copy" -C "$job_dir/bin" nsys-gate; then
    error "$base/$asset has the published SHA-256 but holds no nsys-gate binary; the release is broken. Set install: source to build the action's source."
    exit 1
  fi
  installed="$job_dir/bin/nsys-gate"
  say "installed release $version ($os-$arch) $origin, SHA-256 $expected, in $((SECONDS - started)) s"
}

# 1. A release binary.
case "$install" in
  release)
    if [ -z "$release_url" ]; then
      error "install: release needs release-url: this action was not used as OWNER/REPO@REF, so there is no repository to take releases from. Set release-url to the folder holding v$version/$asset (a mirror filled by scripts/package-release.sh), or set install: auto or source."
      exit 1
    fi
    if [ ! -f "$cached_archive" ] && fetch "$base/nsys-gate-$version-source-tree.txt" "$job_dir/tree.txt" \
        && [ "$(head -c 64 "$job_dir/tree.txt")" != "$tree" ]; then
      say "note: this action's source tree differs from release $version's; using the release binary because install is release"
    fi
    if ! install_release; then
      error "install: release could not download $base/$asset or its .sha256 ($fetch_error). Check that release v$version has an archive for $os-$arch and that release-url is right, or set install: source to build the action's source."
      exit 1
    fi
    use "$installed"
    ;;
  auto)
    if [ -z "$release_url" ]; then
      say "no release to compare with (a local action, and no release-url): building the action's source"
    elif ! fetch "$base/nsys-gate-$version-source-tree.txt" "$job_dir/tree.txt"; then
      say "no published source-tree hash for release $version at $base ($fetch_error): building the action's source"
    elif [ "$(head -c 64 "$job_dir/tree.txt")" != "$tree" ]; then
      say "this action's source tree (${tree:0:16}) is not the one release $version was built from ($(head -c 16 "$job_dir/tree.txt")): building the action's source"
    elif install_release; then
      use "$installed"
    else
      say "release $version has no archive for $os-$arch at $base ($fetch_error): building the action's source"
    fi
    ;;
esac

# 2. The action's own source, built in this job (a build found in the cache could be anyone's).
if ! command -v cargo >/dev/null; then
  error "building nsys-gate $version from the action's source needs a Rust toolchain, and there is no cargo on PATH. Install Rust 1.89 or later on the runner (https://rustup.rs); or pin the action to a release (uses: OWNER/nsys-gate@v$version, OWNER being the account that hosts nsys-gate), whose binary is downloaded; or set install: release to download release $version's binary for this tree anyway."
  exit 1
fi
target_dir=${CARGO_TARGET_DIR:-$job_dir/target}
say "building nsys-gate $version from the action's source (cargo build --profile dist --locked; a few minutes: a build is never reused from the tool cache, which any job on the runner can write)"
cargo build --profile dist --locked --manifest-path "$action_dir/Cargo.toml" --target-dir "$target_dir" >&2
mkdir -p "$job_dir/bin"
cp "$target_dir/dist/nsys-gate" "$job_dir/bin/nsys-gate"
say "built nsys-gate $version from source in $((SECONDS - started)) s"
use "$job_dir/bin/nsys-gate"
