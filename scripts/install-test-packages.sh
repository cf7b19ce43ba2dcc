#!/bin/sh
# What the tests need from Debian besides npm packages:
# - Chromium for the browser tests (Playwright cannot download its own browser here);
# - PyTorch for the LoRA trainer (cloud/trainer), the one Python part: the app itself never
#   needs it, so `npm run setup` for users does not install it. Debian's torch calls whatever
#   libblas.so.3 is installed; the reference BLAS it pulls in made a 0.7M-parameter training
#   step 13x slower than OpenBLAS (821 vs 10.6k tokens/s, one thread), hence libopenblas0;
# - cmake, a C++ compiler and Ninja, with which node-llama-cpp compiles its bundled llama.cpp
#   source: for the real "build llama.cpp for this machine" test, and for the build that
#   `npm run setup` runs after this script (the engine tests then load that build; without
#   these tools set-up says so and the tests run the prebuilt binaries); ccache, through which
#   both compile (scripts/compiler-cache.mjs), so the test's build reuses set-up's objects.
set -e
need=""
[ -x /usr/bin/chromium ] || need="$need chromium"
/usr/bin/python3 -c "import torch" 2>/dev/null || need="$need python3-torch"
[ -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ] || [ "$(uname -m)" != x86_64 ] ||
  need="$need libopenblas0-pthread"
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v g++ >/dev/null 2>&1 || need="$need g++"
command -v ninja >/dev/null 2>&1 || need="$need ninja-build"
command -v ccache >/dev/null 2>&1 || need="$need ccache"
# PostgreSQL's server binaries: the cloud service's store tests start their own throwaway cluster.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need="$need postgresql"
[ -n "$need" ] || exit 0
SUDO=""
[ "$(id -u)" = "0" ] || SUDO="sudo"
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need libopenblas0-pthread >/dev/null
[ -x /usr/bin/chromium ] && /usr/bin/chromium --version
/usr/bin/python3 -c "import torch; print('torch', torch.__version__)"
