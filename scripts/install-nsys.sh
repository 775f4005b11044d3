#!/usr/bin/env bash
# Install a pinned NVIDIA Nsight Systems CLI from Debian's non-free packages into
# .nsys/<version>/ of this repository, without touching the system's apt configuration.
#
#   scripts/install-nsys.sh [2024.2|2023.4|2022.4]     (default 2024.2)
#
# Prints the path of the installed `nsys` (a small wrapper that sets LD_LIBRARY_PATH) on its
# last line of standard output. Progress goes to standard error. Running it again is cheap:
# an existing complete install is reused.
set -euo pipefail

version=${1:-2024.2}
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$repo_root/.nsys/$version"

case "$version" in
  2024.2)
    suite=experimental
    pin=2024.2.3.38~12.5.0-2+b1
    extra=(libarrow500=0~~12.5.0-2+b1 libparquet500=0~~12.5.0-2+b1)
    ;;
  2023.4)
    suite=trixie
    pin=2023.4.4.54~12.4.1-2
    extra=()
    ;;
  2022.4)
    suite=bookworm
    pin=2022.4.2.1~11.8.0-5~deb12u1
    extra=()
    ;;
  *)
    echo "install-nsys: unknown version '$version' (choose 2024.2, 2023.4 or 2022.4)" >&2
    exit 2
    ;;
esac

say() { echo "install-nsys: $*" >&2; }

if [ -x "$dest/nsys" ] && [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$pin" ]; then
  say "Nsight Systems $pin already installed in $dest"
  echo "$dest/nsys"
  exit 0
fi

# libssh-4 (needed by every version) and libelf1 (2023.4 and 2024.2), which a base Debian 12
# lacks, come from the system's own suite.
# shellcheck source=scripts/lib/debian-packages.sh
source "$repo_root/scripts/lib/debian-packages.sh"
# shellcheck source=scripts/lib/check-libs.sh
source "$repo_root/scripts/lib/check-libs.sh"
fetch_debs "$dest" "$suite non-free" "bookworm main" -- \
  "nsight-systems=$pin" "nsight-systems-target=$pin" libssh-4 libelf1 "${extra[@]}"

if [ ! -x "$dest/prefix/usr/bin/nsys" ]; then
  say "nsys not found in the unpacked packages under $dest/prefix"
  exit 1
fi

cat > "$dest/nsys" <<WRAP
#!/bin/sh
# Nsight Systems $pin, installed by scripts/install-nsys.sh
here=\$(CDPATH= cd -- "\$(dirname -- "\$0")" && pwd)
LD_LIBRARY_PATH="\$here/prefix/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "\$here/prefix/usr/bin/nsys" "\$@"
WRAP
chmod +x "$dest/nsys"

if ! check_libs "nsys $version" "$dest/prefix/usr/lib/x86_64-linux-gnu" "$dest/prefix/usr/bin/nsys"; then
  say "Nsight Systems $pin cannot run here: a library above is missing (not marked installed)"
  exit 1
fi
"$dest/nsys" --version >&2
echo "$pin" > "$dest/.complete"
say "installed Nsight Systems $pin in $dest"
echo "$dest/nsys"
