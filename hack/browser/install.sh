#!/usr/bin/env bash
# Installs the headless browser that the console's browser tests
# (cmd/tether/console_browser_test.go) drive: Debian's chromium package, with
# apt-get, when no chromium is on PATH. Idempotent; prints the executable.
set -euo pipefail

find_chromium() {
  command -v chromium || command -v chromium-browser || true
}

bin=$(find_chromium)
if [[ -z $bin ]]; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2
  bin=$(find_chromium)
fi
if [[ -z $bin ]]; then
  echo "hack/browser/install.sh: chromium is still not on PATH after apt-get install chromium" >&2
  exit 1
fi
echo "$bin"
