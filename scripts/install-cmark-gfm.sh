#!/usr/bin/env bash
# Install Debian 12's cmark-gfm (GitHub's fork of the CommonMark reference renderer, with the
# extensions GitHub uses for comments: table, autolink, tagfilter, strikethrough) into
# .tools/cmark-gfm/ of this repository, without touching the system's apt configuration. The
# report tests render reports through it as GitHub does and check the HTML.
#
#   scripts/install-cmark-gfm.sh
#
# Prints the path of a wrapper that runs it (it sets LD_LIBRARY_PATH) on standard output.
set -euo pipefail

pin=0.29.0.gfm.6-6
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$repo_root/.tools/cmark-gfm"
say() { echo "install-cmark-gfm: $*" >&2; }

if [ -x "$dest/cmark-gfm" ] && [ "$(cat "$dest/.complete" 2>/dev/null)" = "$pin" ]; then
  echo "$dest/cmark-gfm"
  exit 0
fi

# shellcheck source=scripts/lib/debian-packages.sh
source "$repo_root/scripts/lib/debian-packages.sh"
fetch_debs "$dest" "bookworm main" -- \
  "cmark-gfm=$pin" "libcmark-gfm0.29.0.gfm.6=$pin" "libcmark-gfm-extensions0.29.0.gfm.6=$pin"
# shellcheck source=scripts/lib/check-libs.sh
source "$repo_root/scripts/lib/check-libs.sh"
if ! check_libs cmark-gfm "$dest/prefix/usr/lib/x86_64-linux-gnu" "$dest/prefix/usr/bin/cmark-gfm"; then
  say "cmark-gfm cannot run here: a library above is missing (not marked installed)"
  exit 1
fi
cat > "$dest/cmark-gfm" <<'WRAP'
#!/bin/sh
# cmark-gfm from Debian 12, installed by scripts/install-cmark-gfm.sh
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
LD_LIBRARY_PATH="$here/prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  exec "$here/prefix/usr/bin/cmark-gfm" "$@"
WRAP
chmod +x "$dest/cmark-gfm"
echo "$pin" > "$dest/.complete"
say "installed in $dest"
echo "$dest/cmark-gfm"
