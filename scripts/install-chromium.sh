#!/bin/sh
# Browser tests drive Debian's Chromium (Playwright's own browser download cannot work here).
set -e
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" = "0" ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
