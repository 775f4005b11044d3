#!/usr/bin/env bash
# Makes sure Chromium is there for scripts/render-report.sh (a headless screenshot of a report
# rendered as GitHub shows it) and prints its path. Chromium is a system package with many
# libraries, so it is not unpacked into .tools/ as the other tools are: it is installed from
# Debian's packages with apt-get (as root), or, without root, the command to run is printed.
#
#   scripts/install-chromium.sh
set -euo pipefail
say() { echo "install-chromium: $*" >&2; }

if command -v chromium >/dev/null; then
  command -v chromium
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "chromium is not installed; as root: apt-get update && apt-get install --no-install-recommends chromium"
  exit 1
fi
say "installing Debian's chromium (apt-get install --no-install-recommends chromium)"
apt-get -qq update >&2
DEBIAN_FRONTEND=noninteractive apt-get -qq install --no-install-recommends chromium >&2
command -v chromium
