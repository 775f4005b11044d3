#!/usr/bin/env bash
# Checks every tool the tests run, as installed in .nsys/ and .tools/ by the install scripts:
# each binary's shared libraries resolve (scripts/lib/check-libs.sh, with the folders its
# wrapper puts on LD_LIBRARY_PATH), else it fails naming the tool, the library and the Debian
# package to add. scripts/test.sh runs it after the installs, before the tests, so that a
# machine missing a library fails here, by name, and not in a test. A tool not installed is
# named too.
#
#   scripts/check-tools.sh [TOOL...]
#
# TOOL: nsys, cmark-gfm, gitlab-ci-local or act; without one, all of them.
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/check-libs.sh
source "$repo_root/scripts/lib/check-libs.sh"

wanted=("${@:-nsys cmark-gfm gitlab-ci-local act}")
wanted=" ${wanted[*]} "
wants() { [[ "$wanted" == *" $1 "* ]]; }
failed=0
checked=()
check() {
  local tool=$1
  if check_libs "$@"; then
    checked+=("$tool")
  else
    failed=1
  fi
}

for version in 2024.2 2023.4 2022.4; do
  wants nsys || break
  prefix="$repo_root/.nsys/$version/prefix"
  if [ ! -f "$repo_root/.nsys/$version/.complete" ]; then
    echo "check-tools: nsys $version is not installed (scripts/install-nsys.sh $version)" >&2
    failed=1
    continue
  fi
  check "nsys $version" "$prefix/usr/lib/x86_64-linux-gnu" "$prefix/usr/bin/nsys"
done

cmark="$repo_root/.tools/cmark-gfm"
if ! wants cmark-gfm; then
  :
elif [ -f "$cmark/.complete" ]; then
  check cmark-gfm "$cmark/prefix/usr/lib/x86_64-linux-gnu" "$cmark/prefix/usr/bin/cmark-gfm"
else
  echo "check-tools: cmark-gfm is not installed (scripts/install-cmark-gfm.sh)" >&2
  failed=1
fi

gcl=$(find "$repo_root/.tools/" -maxdepth 1 -name 'gitlab-ci-local-*' -type d 2>/dev/null | sort | tail -n 1)
if ! wants gitlab-ci-local; then
  :
elif [ -n "$gcl" ] && [ -f "$gcl/.complete" ]; then
  # rsync: the one unpacked beside it, else the system's.
  rsync_bin="$gcl/rsync/prefix/usr/bin/rsync"
  [ -e "$rsync_bin" ] || rsync_bin=$(command -v rsync || echo "$gcl/rsync/prefix/usr/bin/rsync")
  check "rsync (for gitlab-ci-local)" "$gcl/rsync/prefix/usr/lib/x86_64-linux-gnu" "$rsync_bin"
  if command -v node >/dev/null; then
    check "node (for gitlab-ci-local)" "" "$(command -v node)"
  else
    echo "check-tools: gitlab-ci-local needs Node.js 20, and node is not on PATH" >&2
    failed=1
  fi
else
  echo "check-tools: gitlab-ci-local is not installed (scripts/install-gitlab-ci-local.sh)" >&2
  failed=1
fi

act=$(find "$repo_root/.tools/" -maxdepth 3 -path '*/act-*/bin/act' 2>/dev/null | sort | tail -n 1)
if ! wants act; then
  :
elif [ -n "$act" ]; then
  check act "" "$act"
else
  echo "check-tools: act is not installed (scripts/install-act.sh)" >&2
  failed=1
fi

if [ "$failed" -ne 0 ]; then
  echo "check-tools: the tools above cannot run on this machine: fix their installers (or install the packages named), then run scripts/test.sh again" >&2
  exit 1
fi
echo "check-tools: every library of ${#checked[@]} tools resolves: $(printf '%s, ' "${checked[@]}" | sed 's/, $//')" >&2
