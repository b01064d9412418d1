#!/usr/bin/env bash
# The browser tests drive Debian's chromium. Install it when missing (as root),
# otherwise stop with the one command to run. Never a silent skip.
set -euo pipefail
CHROMIUM="${PARLEY_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "npm test: installing Debian's chromium for the browser tests…"
  export DEBIAN_FRONTEND=noninteractive
  # Not left to `set -e`: a failed install must still end with the command to run.
  if apt-get update -qq && apt-get install -y -qq chromium >/dev/null && [ -x "$CHROMIUM" ]; then exit 0; fi
  echo "npm test: installing chromium with apt-get failed." >&2
fi
echo "npm test: the browser tests need Debian's chromium at $CHROMIUM. Install it with:" >&2
echo "  sudo apt-get update && sudo apt-get install -y chromium" >&2
exit 1
