# Shared by the install scripts (sourced, not run): Debian packages fetched with a private apt
# state, never touching the system's apt configuration. The caller defines `say MESSAGE`.

# debian_mirror: prints the Debian mirror the system's apt already uses (never a host name
# written here), or fails saying where it looked.
debian_mirror() {
  local sources=/etc/apt/sources.list.d/debian.sources uri=""
  if [ -f "$sources" ]; then
    uri=$(awk '/^URIs:/{print $2; exit}' "$sources")
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb"{for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
  fi
  if [ -z "$uri" ]; then
    say "could not find the Debian mirror in $sources or /etc/apt/sources.list"
    return 1
  fi
  echo "$uri"
}

# fetch_debs DEST SUITE_COMPONENTS... -- PACKAGE...: downloads the packages from the system's
# Debian mirror (each SUITE_COMPONENTS, e.g. "bookworm main", one sources line signed by
# Debian's archive key) and unpacks them into DEST/prefix, DEST emptied first.
fetch_debs() {
  local dest=$1 label=$2 uri work keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  shift
  uri=$(debian_mirror)
  work=$(mktemp -d)
  # shellcheck disable=SC2064  # the folder is known now; removed however the script ends
  trap "rm -rf '$work'" EXIT
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
  while [ "$1" != "--" ]; do
    echo "deb [signed-by=$keyring] $uri $1"
    shift
  done > "$work/sources.list"
  shift
  local apt_opts=(
    -o "Dir::Etc::sourcelist=$work/sources.list"
    -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache=$work/cache"
    -o "APT::Get::List-Cleanup=0"
    -o "APT::Sandbox::User=root"
  )
  say "fetching package lists ($label)"
  apt-get "${apt_opts[@]}" -qq update >&2
  say "downloading $*"
  (cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download "$@" >&2)
  rm -rf "$dest"
  mkdir -p "$dest/prefix"
  local deb
  for deb in "$work"/debs/*.deb; do
    say "unpacking $(basename "$deb")"
    dpkg -x "$deb" "$dest/prefix"
  done
}
