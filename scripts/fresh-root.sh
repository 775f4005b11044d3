#!/usr/bin/env bash
# Runs .ci/run's install steps on a fresh Debian 12, where the libraries of this machine are not
# visible: a minimal Debian 12 root made by debootstrap (`--variant=minbase`: the base system
# and apt, nothing else), a fresh clone of this repository's committed HEAD in it, and, under
# chroot:
#
#   1. on the base system alone: scripts/install-nsys.sh for 2024.2, 2023.4 and 2022.4,
#      scripts/install-cmark-gfm.sh and scripts/install-gitlab-ci-local.sh (with this machine's
#      Node.js 20 copied in: Debian 12's is 18), then `scripts/check-tools.sh nsys cmark-gfm
#      gitlab-ci-local`: each tool's libraries must resolve from what its installer unpacked;
#   2. the README's prerequisites from Debian's packages (python3-pip for act, git, gcc,
#      libc6-dev, curl, ca-certificates), scripts/install-act.sh, then scripts/check-tools.sh;
#   3. with --test FILTER: `cargo test --locked --test cli FILTER` (this machine's Rust
#      toolchain mounted read-only: rustup cannot download one here); with --all: .ci/run, the
#      whole suite (about 20 minutes on 2 cores, more on a loaded machine).
#
#   sudo scripts/fresh-root.sh [--test FILTER | --all] [ROOT]
#
# ROOT: where the root is made (default /var/tmp/nsys-gate-fresh-root), emptied first. Needs
# root, debootstrap and about 3 GB there (the three Nsight Systems versions). Debian's packages
# are fetched from the mirror the system's apt uses; debootstrap keeps its downloads in
# ROOT.cache/ for the next run. Exits non-zero, naming the step, when any step fails.
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { echo "fresh-root: $*" >&2; }

mode=install
filter=
while [ $# -gt 0 ]; do
  case "$1" in
    --test) mode=test; filter=${2:?--test needs a test filter}; shift 2 ;;
    --all) mode=all; shift ;;
    -h | --help) sed -n '2,25p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) say "unknown option $1"; exit 2 ;;
    *) break ;;
  esac
done
root=${1:-/var/tmp/nsys-gate-fresh-root}

[ "$(id -u)" = 0 ] || { say "needs root (debootstrap, chroot, mounts)"; exit 2; }
command -v debootstrap >/dev/null || { say "needs debootstrap (apt-get install debootstrap)"; exit 2; }

# shellcheck source=scripts/lib/debian-packages.sh
source "$repo_root/scripts/lib/debian-packages.sh"
mirror=$(debian_mirror)

cleanup() {
  # Every mount under the root, deepest first; the root's files stay to look at.
  { grep -o " $root/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m" || true; done
  while grep -q " $root " /proc/mounts; do umount -l "$root" || break; done
}
trap cleanup EXIT
cleanup

if grep -q " $root[/ ]" /proc/mounts; then
  say "something is still mounted under $root: unmount it first (nothing removed)"
  exit 1
fi
say "making a minimal Debian 12 in $root (debootstrap --variant=minbase bookworm)"
rm -rf "$root"
mkdir -p "$root.cache"
debootstrap --variant=minbase --cache-dir="$root.cache" bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
  say "debootstrap failed: see $root.debootstrap.log"
  exit 1
}
# The system's apt sources (the same mirror, as a fresh install has them), its settings for
# reaching the mirror (the `Acquire::` ones: a mirror of a fixed date needs its date checks
# off), and DNS.
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo "deb $mirror bookworm main" >"$root/etc/apt/sources.list"
grep -l '^Acquire::' /etc/apt/apt.conf.d/* 2>/dev/null | while read -r conf; do
  cp "$conf" "$root/etc/apt/apt.conf.d/"
done
# This machine's way to the package registries, as a fresh machine of its kind has it: its
# local CA certificates (kept by ca-certificates when it is installed later), its CA bundle,
# and npm's and pip's global settings (which name that bundle).
mkdir -p "$root/usr/local/share/ca-certificates" "$root/etc/ssl/certs" "$root/usr/local/etc"
cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
[ ! -f /etc/ssl/certs/ca-certificates.crt ] || cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
npmrc=$(npm config get globalconfig 2>/dev/null || true)
[ -z "$npmrc" ] || [ ! -f "$npmrc" ] || cp "$npmrc" "$root/usr/local/etc/npmrc"
[ ! -f /etc/pip.conf ] || cp /etc/pip.conf "$root/etc/pip.conf"
# The root a mount point of its own, as a container's is: inside the chroot `/` can then be
# made private in a new mount namespace (`unshare --mount`, as a test does to make a read-only
# run directory for root).
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"

say "cloning $(git -C "$repo_root" rev-parse --short HEAD) (committed files only) into $root/src"
git clone --quiet --no-local "$repo_root" "$root/src"

# This machine's variables that name its CA certificates (a fresh machine of its kind has them
# too), passed into the root's otherwise empty environment.
ca_env=()
for name in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE PIP_CERT REQUESTS_CA_BUNDLE GIT_SSL_CAINFO; do
  [ -z "${!name:-}" ] || ca_env+=("$name=${!name}")
done
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 "${ca_env[@]}" "$@"; }
step() {
  local name=$1
  shift
  say "step: $name"
  in_root bash -c "cd /src && $*" || { say "FAILED: $name"; exit 1; }
}

# 1. On the base system alone.
for version in 2024.2 2023.4 2022.4; do
  step "install-nsys.sh $version" "scripts/install-nsys.sh $version >/dev/null"
done
step install-cmark-gfm.sh "scripts/install-cmark-gfm.sh >/dev/null"
if ! command -v node >/dev/null || ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
  say "this machine has no Node.js 20 to copy into the root (gitlab-ci-local needs it)"
  exit 1
fi
node_modules=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules"
cp "$(readlink -f "$(command -v node)")" "$root/usr/local/bin/node"
cp -a "$node_modules" "$root/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
step install-gitlab-ci-local.sh "scripts/install-gitlab-ci-local.sh >/dev/null"
step "check-tools.sh on the base system" "scripts/check-tools.sh nsys cmark-gfm gitlab-ci-local"

# 2. The prerequisites the README lists, then act and every tool.
step "apt-get install the prerequisites" \
  "apt-get -qq update && DEBIAN_FRONTEND=noninteractive apt-get -qq install --no-install-recommends python3-pip git gcc libc6-dev curl ca-certificates >/dev/null"
step install-act.sh "scripts/install-act.sh >/dev/null"
step check-tools.sh "scripts/check-tools.sh"

# 3. The tests, with this machine's Rust toolchain.
if [ "$mode" != install ]; then
  rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
  cargo_bin=$(dirname "$(command -v cargo)")
  # Where a machine with Rust has it: the toolchain's programs in the root's ~/.cargo/bin (the
  # tests' act jobs put that folder on their PATH when they want cargo, and leave it off when
  # they want a runner without Rust), the toolchains beside them.
  mkdir -p "$root/opt/rustup" "$root/root/.cargo/bin"
  mount --bind "$rustup_home" "$root/opt/rustup" && mount -o remount,bind,ro "$root/opt/rustup"
  mount --bind "$cargo_bin" "$root/root/.cargo/bin" && mount -o remount,bind,ro "$root/root/.cargo/bin"
  toolchain=$(rustup show active-toolchain 2>/dev/null | awk '{print $1}')
  in_root_rust() {
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 CI=true RUSTUP_HOME=/opt/rustup "${ca_env[@]}" \
      RUSTUP_TOOLCHAIN="$toolchain" \
      PATH=/root/.cargo/bin:/usr/local/bin:/usr/bin:/bin "$@"
  }
  if [ "$mode" = test ]; then
    say "step: cargo test --test cli $filter"
    in_root_rust bash -c "cd /src && cargo test --locked --test cli -- $filter" || { say "FAILED: cargo test --test cli $filter"; exit 1; }
  else
    say "step: .ci/run"
    in_root_rust bash -c "cd /src && bash .ci/run" || { say "FAILED: .ci/run"; exit 1; }
  fi
fi
say "passed ($mode) in $root"
