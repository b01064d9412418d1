#!/usr/bin/env bash
# The test of deploy/prometheus/alerts.yml runs `promtool check rules`; promtool comes with Debian's prometheus
# package. Install it when missing (as root), otherwise stop with the one command to run. Never a silent skip.
set -euo pipefail
PROMTOOL="${PARLEY_PROMTOOL:-/usr/bin/promtool}"
if [ -x "$PROMTOOL" ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "npm test: installing Debian's prometheus (for promtool) to check the alert rules…"
  export DEBIAN_FRONTEND=noninteractive
  # Not left to `set -e`: a failed install must still end with the command to run.
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null && [ -x "$PROMTOOL" ]; then exit 0; fi
  echo "npm test: installing prometheus with apt-get failed." >&2
fi
echo "npm test: the alert rules' test needs promtool at $PROMTOOL (Debian's prometheus package). Install it with:" >&2
echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus" >&2
exit 1
