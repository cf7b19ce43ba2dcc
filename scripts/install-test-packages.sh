#!/bin/sh
# What the tests need from Debian besides npm packages:
# - Chromium for the browser tests (Playwright cannot download its own browser here);
# - PyTorch for the LoRA trainer (cloud/trainer), the one Python part: the app itself never
#   needs it, so `npm run setup` for users does not install it.
set -e
need=""
[ -x /usr/bin/chromium ] || need="$need chromium"
/usr/bin/python3 -c "import torch" 2>/dev/null || need="$need python3-torch"
[ -n "$need" ] || exit 0
SUDO=""
[ "$(id -u)" = "0" ] || SUDO="sudo"
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
[ -x /usr/bin/chromium ] && /usr/bin/chromium --version
/usr/bin/python3 -c "import torch; print('torch', torch.__version__)"
