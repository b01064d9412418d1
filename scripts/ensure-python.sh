#!/usr/bin/env bash
# The Python SDK's tests (sdk-python/: pytest against a real Parley, and mypy --strict) run inside `npm test`
# (test/python/sdk-python.test.ts) from a virtual environment of their own, sdk-python/.venv. Create it when missing
# or when sdk-python/pyproject.toml changed; otherwise stop with the one command to run. Never a silent skip.
# PARLEY_PYTHON=/path/to/python3 picks another interpreter (3.10 or newer).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=sdk-python/.venv
STAMP="$VENV/.installed-pyproject.toml"
PYTHON="${PARLEY_PYTHON:-python3}"

if [ -x "$VENV/bin/python" ] && cmp -s sdk-python/pyproject.toml "$STAMP"; then exit 0; fi

if ! command -v "$PYTHON" >/dev/null 2>&1 || ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "npm test: the Python SDK's tests need Python 3.10 or newer as '$PYTHON'. Install it with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y python3 python3-venv" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "npm test: creating $VENV for the Python SDK's tests…"
  if ! "$PYTHON" -m venv "$VENV" >/dev/null; then
    rm -rf "$VENV"
    echo "npm test: '$PYTHON -m venv' failed (Debian ships venv separately). Install it with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y python3-venv" >&2
    exit 1
  fi
fi
echo "npm test: installing sdk-python and its test tools into $VENV…"
if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --retries 1 -e 'sdk-python[dev]'; then
  echo "npm test: installing the Python SDK's dependencies failed. Run:" >&2
  echo "  $VENV/bin/python -m pip install -e 'sdk-python[dev]'" >&2
  exit 1
fi
cp sdk-python/pyproject.toml "$STAMP"
