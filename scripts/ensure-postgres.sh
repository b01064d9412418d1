#!/usr/bin/env bash
# The tests start real PostgreSQL servers from Debian's binaries (test/support/postgres.ts).
# Install them when missing (as root), otherwise stop with the one command to run. Never a silent skip.
# PARLEY_PG_BIN=/path/to/bin points at another PostgreSQL 13+ (a directory with initdb, postgres, pg_ctl).
set -euo pipefail
MIN_VERSION=13

# The newest /usr/lib/postgresql/N/bin holding all three binaries, N >= 13; prints nothing when there is none.
find_bin() {
  if [ -n "${PARLEY_PG_BIN:-}" ]; then
    echo "$PARLEY_PG_BIN"
    return
  fi
  local dir version
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5 -n -r); do
    version="$(basename "$(dirname "$dir")")"
    case "$version" in '' | *[!0-9]*) continue ;; esac
    if [ "$version" -ge "$MIN_VERSION" ] && [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return
    fi
  done
}

usable() {
  local bin="$1"
  [ -n "$bin" ] && [ -x "$bin/initdb" ] && [ -x "$bin/postgres" ] && [ -x "$bin/pg_ctl" ] || return 1
  # As root the servers run as the `postgres` user (PostgreSQL refuses root); Debian's package creates it.
  if [ "$(id -u)" = "0" ] && ! id -u postgres >/dev/null 2>&1; then return 1; fi
}

BIN="$(find_bin)"
if usable "$BIN"; then exit 0; fi
if [ -n "${PARLEY_PG_BIN:-}" ]; then
  echo "npm test: PARLEY_PG_BIN=$PARLEY_PG_BIN does not hold initdb, postgres and pg_ctl (or, as root, there is no 'postgres' user)." >&2
  exit 1
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "npm test: installing Debian's postgresql for the PostgreSQL tests…"
  export DEBIAN_FRONTEND=noninteractive
  # Not left to `set -e`: a failed install must still end with the command to run.
  if apt-get update -qq && apt-get install -y -qq postgresql >/dev/null && usable "$(find_bin)"; then exit 0; fi
  echo "npm test: installing postgresql with apt-get failed." >&2
fi
echo "npm test: the PostgreSQL tests need Debian's PostgreSQL server ($MIN_VERSION or newer: /usr/lib/postgresql/N/bin/{initdb,postgres,pg_ctl}). Install it with:" >&2
echo "  sudo apt-get update && sudo apt-get install -y postgresql" >&2
exit 1
