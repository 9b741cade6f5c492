#!/usr/bin/env bash
# Make Debian's Chromium available for the browser tests (tests/test_browser.py), without a
# download of Playwright's own browser. Installs it with apt-get where this runs as root (CI);
# elsewhere prints how, and the browser tests skip with the same advice.
set -u
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium (apt-get) for the browser tests"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
    && exit 0
  echo "apt-get could not install chromium; the browser tests will skip" >&2
  exit 0
fi
echo "no chromium here and no root to install it: the browser tests will skip." \
     "Install it (sudo apt-get install chromium) or set GEMVLAB_CHROMIUM=/path/to/chromium, then make test" >&2
exit 0
