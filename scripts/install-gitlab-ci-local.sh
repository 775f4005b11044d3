#!/usr/bin/env bash
# Installs gitlab-ci-local (the npm package, pinned) into .tools/gitlab-ci-local-VERSION/ of this
# repository for the end-to-end test of examples/gitlab/ (tests/cli/gitlab_pipeline.rs), with
# Debian 12's rsync beside it (gitlab-ci-local copies the project with it before a job), and
# prints the path of a wrapper that runs it with that rsync on PATH. Nothing outside the
# repository changes: npm installs into the folder, rsync is unpacked there from its package
# (scripts/lib/debian-packages.sh). Needs Node.js 20 and npm (4.74.0 and later need Node.js 22).
set -euo pipefail
version=4.73.0
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$repo_root/.tools/gitlab-ci-local-$version"
say() { echo "install-gitlab-ci-local: $*" >&2; }

if [ -x "$dest/gitlab-ci-local" ] && [ "$(cat "$dest/.complete" 2>/dev/null)" = "$version" ]; then
  echo "$dest/gitlab-ci-local"
  exit 0
fi
for tool in node npm; do
  command -v "$tool" >/dev/null || { say "$tool is not installed: gitlab-ci-local needs Node.js 20 and npm"; exit 1; }
done

rm -rf "$dest"
npm install --prefix "$dest/npm" --no-audit --no-fund --loglevel=error "gitlab-ci-local@$version" >&2
if command -v rsync >/dev/null; then
  mkdir -p "$dest/rsync/prefix/usr/bin"
else
  # shellcheck source=scripts/lib/debian-packages.sh
  source "$repo_root/scripts/lib/debian-packages.sh"
  fetch_debs "$dest/rsync" "bookworm main" -- rsync
fi
cat > "$dest/gitlab-ci-local" <<'WRAP'
#!/bin/sh
# gitlab-ci-local, installed by scripts/install-gitlab-ci-local.sh, with its rsync on PATH.
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
PATH="$here/rsync/prefix/usr/bin:$PATH" exec node "$here/npm/node_modules/gitlab-ci-local/dist/index.js" "$@"
WRAP
chmod +x "$dest/gitlab-ci-local"
"$dest/gitlab-ci-local" --version >&2
echo "$version" > "$dest/.complete"
say "installed in $dest"
echo "$dest/gitlab-ci-local"
