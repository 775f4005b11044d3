#!/usr/bin/env bash
# Makes sure Chromium is there for scripts/render-report.sh (a headless screenshot of a report
# rendered as GitHub shows it) and prints its path. Chromium is a system package with many
# libraries, so it is not unpacked into .tools/ as the other tools are: it is installed from
# Debian's packages with apt-get (as root), or, without root, the command to run is printed.
#
#   scripts/install-chromium.sh
set -euo pipefail
say() { echo "install-chromium: $*" >&2; }

# Chromium, and a colour emoji font: a report's ✅, ⚠️ and 🔺 are boxes without one.
packages="chromium fonts-noto-color-emoji"
if command -v chromium >/dev/null && fc-list 2>/dev/null | grep -qi "color emoji"; then
  command -v chromium
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "chromium or an emoji font is not installed; as root: apt-get update && apt-get install --no-install-recommends $packages"
  exit 1
fi
say "installing Debian's $packages (apt-get install --no-install-recommends)"
apt-get -qq update >&2
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get -qq install --no-install-recommends $packages >&2
command -v chromium
