#!/usr/bin/env bash
# Installs gitlab-ci-local (the npm package, pinned) into .tools/gitlab-ci-local-VERSION/ of this
# repository for the end-to-end test of examples/gitlab/ (tests/cli/gitlab_pipeline.rs), with
# Debian 12's rsync beside it (gitlab-ci-local copies the project with it before a job) when the
# system has none, and prints the path of a wrapper that runs it with that rsync on PATH.
# Nothing outside the repository changes: npm installs into the folder, rsync and the libraries
# a base Debian 12 lacks for it (libpopt0, libxxhash0, libssl3) are unpacked there from their
# packages (scripts/lib/debian-packages.sh), and every library is checked before the install is
# marked complete (scripts/lib/check-libs.sh). Needs Node.js 20 and npm (4.74.0 and later need
# Node.js 22).
set -euo pipefail
version=4.73.0
# What .complete holds: the version and this install's layout (rsync with its libraries), so
# that an install of an older layout is done again.
complete="$version rsync-libs"
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$repo_root/.tools/gitlab-ci-local-$version"
say() { echo "install-gitlab-ci-local: $*" >&2; }

if [ -x "$dest/gitlab-ci-local" ] && [ "$(cat "$dest/.complete" 2>/dev/null)" = "$complete" ]; then
  echo "$dest/gitlab-ci-local"
  exit 0
fi
for tool in node npm; do
  command -v "$tool" >/dev/null || { say "$tool is not installed: gitlab-ci-local needs Node.js 20 and npm"; exit 1; }
done

rm -rf "$dest"
npm install --prefix "$dest/npm" --no-audit --no-fund --loglevel=error "gitlab-ci-local@$version" >&2
# shellcheck source=scripts/lib/check-libs.sh
source "$repo_root/scripts/lib/check-libs.sh"
mkdir -p "$dest/rsync/bin"
if command -v rsync >/dev/null; then
  check_libs rsync "" "$(command -v rsync)" || {
    say "the system's rsync cannot run: a library above is missing (not marked installed)"
    exit 1
  }
else
  # shellcheck source=scripts/lib/debian-packages.sh
  source "$repo_root/scripts/lib/debian-packages.sh"
  fetch_debs "$dest/rsync" "bookworm main" -- rsync libpopt0 libxxhash0 libssl3
  check_libs rsync "$dest/rsync/prefix/usr/lib/x86_64-linux-gnu" "$dest/rsync/prefix/usr/bin/rsync" || {
    say "rsync cannot run here: a library above is missing (not marked installed)"
    exit 1
  }
  # Its libraries on LD_LIBRARY_PATH for rsync alone, not for gitlab-ci-local or the jobs
  # (fetch_debs emptied $dest/rsync: bin/ is made again).
  mkdir -p "$dest/rsync/bin"
  cat > "$dest/rsync/bin/rsync" <<'WRAP'
#!/bin/sh
# Debian 12's rsync with its libraries, installed by scripts/install-gitlab-ci-local.sh
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
LD_LIBRARY_PATH="$here/prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  exec "$here/prefix/usr/bin/rsync" "$@"
WRAP
  chmod +x "$dest/rsync/bin/rsync"
  "$dest/rsync/bin/rsync" --version >/dev/null
fi
cat > "$dest/gitlab-ci-local" <<'WRAP'
#!/bin/sh
# gitlab-ci-local, installed by scripts/install-gitlab-ci-local.sh, with its rsync on PATH.
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
PATH="$here/rsync/bin:$PATH" exec node "$here/npm/node_modules/gitlab-ci-local/dist/index.js" "$@"
WRAP
chmod +x "$dest/gitlab-ci-local"
"$dest/gitlab-ci-local" --version >&2
echo "$complete" > "$dest/.complete"
say "installed in $dest"
echo "$dest/gitlab-ci-local"
