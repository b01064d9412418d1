// Where Debian's PostgreSQL server binaries are, and which user runs them: the same search as
// scripts/ensure-postgres.sh (which installs them), so a direct `npx vitest run` without them fails
// with the command to run instead of a spawn error.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const MIN_POSTGRES_VERSION = 13;
const DEBIAN_ROOT = '/usr/lib/postgresql';
const NEEDED = ['initdb', 'postgres', 'pg_ctl'];
const INSTALL_HINT = "run `bash scripts/ensure-postgres.sh` (as root it installs Debian's postgresql; otherwise it prints the command)";

function hasAll(bin: string): boolean {
  try {
    for (const name of NEEDED) accessSync(join(bin, name), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The directory holding initdb and postgres: $PARLEY_PG_BIN, else the newest /usr/lib/postgresql/N/bin with N >= 13. */
export function findPostgresBin(env: NodeJS.ProcessEnv = process.env, root = DEBIAN_ROOT): string {
  if (env.PARLEY_PG_BIN) {
    if (hasAll(env.PARLEY_PG_BIN)) return env.PARLEY_PG_BIN;
    throw new Error(`PARLEY_PG_BIN=${env.PARLEY_PG_BIN} does not hold ${NEEDED.join(', ')}`);
  }
  let versions: number[] = [];
  try {
    versions = readdirSync(root)
      .filter((v) => /^\d+$/.test(v))
      .map(Number);
  } catch {}
  const bin = versions
    .filter((v) => v >= MIN_POSTGRES_VERSION)
    .sort((a, b) => b - a)
    .map((v) => join(root, String(v), 'bin'))
    .find(hasAll);
  if (!bin) throw new Error(`no PostgreSQL ${MIN_POSTGRES_VERSION}+ server found in ${root}/N/bin: ${INSTALL_HINT}`);
  return bin;
}

export interface RunAs {
  uid: number;
  gid: number;
}

/** PostgreSQL refuses to run as root: as root, its processes run as the `postgres` user; otherwise as ourselves (undefined). */
export function postgresRunAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error(`running as root, PostgreSQL must run as the 'postgres' user and there is none: ${INSTALL_HINT}`);
  }
}
