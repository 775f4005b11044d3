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

# The mirror is the one the system already uses (never a host name written here).
uri=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
  uri=$(awk '$1=="deb"{for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
fi
[ -n "$uri" ] || { say "could not find the Debian mirror in the system's apt sources"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm main" > "$work/sources.list"
apt_opts=(
  -o "Dir::Etc::sourcelist=$work/sources.list"
  -o "Dir::Etc::sourceparts=-"
  -o "Dir::State::Lists=$work/lists"
  -o "Dir::Cache=$work/cache"
  -o "APT::Get::List-Cleanup=0"
  -o "APT::Sandbox::User=root"
)
say "fetching package lists (bookworm main)"
apt-get "${apt_opts[@]}" -qq update >&2
say "downloading cmark-gfm $pin"
(cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download \
  "cmark-gfm=$pin" "libcmark-gfm0.29.0.gfm.6=$pin" "libcmark-gfm-extensions0.29.0.gfm.6=$pin" >&2)
rm -rf "$dest"
mkdir -p "$dest/prefix"
for deb in "$work"/debs/*.deb; do
  dpkg -x "$deb" "$dest/prefix"
done
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
