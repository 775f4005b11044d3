#!/usr/bin/env bash
# The shared libraries of an installed tool, checked with ldd: a library that no folder given and
# no system folder holds, or (for a tool unpacked with its libraries) one that only this
# machine's extra packages hold, is named, with the tool, the binary and the Debian package that ships
# it, so that an install step fails there instead of a test failing later with
# "error while loading shared libraries".
#
# Sourced by the install scripts and scripts/check-tools.sh (`check_libs` below), or run:
#
#   scripts/lib/check-libs.sh TOOL LIBRARY_PATH BINARY...
#
# LIBRARY_PATH: the folders the tool's wrapper puts on LD_LIBRARY_PATH (separated by `:`, may be
# empty). Exits 0 when every library resolves, 1 naming each that does not.

# The Debian 12 package that ships a library the installed tools link against. A library not
# listed here is still named; its package is then found with `apt-file search LIBRARY`.
debian_package_of() {
  case "$1" in
    libpopt.so.0) echo libpopt0 ;;
    libxxhash.so.0) echo libxxhash0 ;;
    libcrypto.so.3 | libssl.so.3) echo libssl3 ;;
    libacl.so.1) echo libacl1 ;;
    liblz4.so.1) echo liblz4-1 ;;
    libzstd.so.1) echo libzstd1 ;;
    libz.so.1) echo zlib1g ;;
    libelf.so.1) echo libelf1 ;;
    libpfm.so.4) echo libpfm4 ;;
    libssh.so.4) echo libssh-4 ;;
    libarrow.so.500) echo libarrow500 ;;
    libparquet.so.500) echo libparquet500 ;;
    libstdc++.so.6) echo libstdc++6 ;;
    libgcc_s.so.1) echo libgcc-s1 ;;
    libcmark-gfm.so.*) echo "libcmark-gfm${1#libcmark-gfm.so.}" ;;
    libcmark-gfm-extensions.so.*) echo "libcmark-gfm-extensions${1#libcmark-gfm-extensions.so.}" ;;
    *) return 1 ;;
  esac
}

# The Debian package that holds PATH on this machine (dpkg's name for it, with or without the
# /usr of a merged /usr), or nothing.
owning_package() {
  local path=$1 candidate
  for candidate in "$path" "/usr$path" "${path#/usr}" "$(readlink -f "$path")"; do
    dpkg-query -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1 && return 0
  done
  return 1
}

# Whether PACKAGE is in a minimal Debian 12 (scripts/lib/debian12-minbase.txt).
in_base_system() {
  local list
  list="$(dirname "${BASH_SOURCE[0]}")/debian12-minbase.txt"
  grep -qx -- "$1" "$list"
}

# check_libs TOOL LIBRARY_PATH BINARY...: prints one line per missing library on standard error
# and returns 1 when any is missing; a binary that is not dynamically linked (act, a Go binary)
# has nothing to check. With a LIBRARY_PATH (a tool whose installer unpacked it and its
# libraries), a library found on this machine outside it must also come from a package of a
# minimal Debian 12: one that only this machine has would be missing on a fresh one, so it is
# named like a missing one (this machine's other packages cannot hide it).
check_libs() {
  local tool=$1 libpath=$2 binary missing=0 line lib package out found
  shift 2
  for binary in "$@"; do
    if [ ! -e "$binary" ]; then
      echo "check-libs: $tool: $binary does not exist" >&2
      missing=1
      continue
    fi
    binary=$(readlink -f "$binary")
    out=$(LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$binary" 2>&1) || {
      case "$out" in
        *"not a dynamic executable"* | *"statically linked"*) continue ;;
      esac
    }
    while IFS= read -r line; do
      case "$line" in
        *"=> not found"*)
          lib=$(echo "$line" | awk '{print $1}')
          if package=$(debian_package_of "$lib"); then
            echo "check-libs: $tool: $binary needs $lib, which is not installed: add the Debian package $package to the tool's installer (or apt-get install $package)" >&2
          else
            echo "check-libs: $tool: $binary needs $lib, which is not installed: find its Debian package with \`apt-file search $lib\` and add it to the tool's installer" >&2
          fi
          missing=1
          ;;
        *" => /"*)
          [ -n "$libpath" ] && command -v dpkg-query >/dev/null || continue
          lib=$(echo "$line" | awk '{print $1}')
          found=$(echo "$line" | awk '{print $3}')
          case ":$libpath:" in
            *":$(dirname "$found"):"*) continue ;;
          esac
          if ! package=$(owning_package "$found") || [ -z "$package" ]; then
            echo "check-libs: $tool: $binary takes $lib from $found, which no Debian package of this machine holds: a fresh Debian 12 does not have it; add its package to the tool's installer" >&2
            missing=1
          elif ! in_base_system "$package"; then
            echo "check-libs: $tool: $binary takes $lib from this machine's package $package, which a minimal Debian 12 does not have: add the Debian package $package to the tool's installer" >&2
            missing=1
          fi
          ;;
      esac
    done <<<"$out"
  done
  return "$missing"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  if [ $# -lt 3 ]; then
    echo "usage: check-libs.sh TOOL LIBRARY_PATH BINARY..." >&2
    exit 2
  fi
  check_libs "$@"
fi
