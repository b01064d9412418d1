// A fresh PostgreSQL data directory. `initdb` takes 1–2 s on an idle machine and 6 s or more on a
// loaded one, so it runs once per checkout: its pristine result is kept in
// node_modules/.cache/parley-postgres/ (per PostgreSQL major version and user), the global setup points
// PARLEY_PG_TEMPLATE at it, and every server of a run starts from a copy (cp -a of ~40 MB).
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import type { RunAs } from './postgres-binaries.ts';
import { trackChild } from './child-processes.ts';

/** The environment PostgreSQL's programs run with: no PG* variables of the caller, a fixed locale. */
export function postgresEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LC_ALL: 'C', TZ: 'UTC' };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
  return env;
}

function run(file: string, args: string[], o: { cwd: string; runAs?: RunAs }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = trackChild(spawn(file, args, { cwd: o.cwd, uid: o.runAs?.uid, gid: o.runAs?.gid, env: postgresEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${file} exited with ${code}:\n${out}`))));
  });
}

/** As root, the `postgres` user must be able to walk down to its directory: say which ancestor stops it. */
export function checkReachable(dir: string, runAs: RunAs) {
  for (let d = dirname(dir); d !== dirname(d); d = dirname(d)) {
    const s = statSync(d);
    const canEnter = s.uid === runAs.uid ? s.mode & 0o100 : s.gid === runAs.gid ? s.mode & 0o010 : s.mode & 0o001;
    if (!canEnter) throw new Error(`the postgres user cannot enter ${d} (mode ${(s.mode & 0o777).toString(8)}): put TMPDIR somewhere it can reach`);
  }
}

/** `initdb` into `dataDir` (which must not exist; its parent must, and becomes the postgres user's when we are root): superuser `postgres`, UTF8, C locale. */
export async function initdb(bin: string, dataDir: string, runAs: RunAs | undefined) {
  const parent = dirname(dataDir);
  if (runAs) {
    checkReachable(parent, runAs);
    chownSync(parent, runAs.uid, runAs.gid);
  }
  // --no-sync: the OS may lose a brand-new test cluster in a power cut; nothing a test claims rests on it.
  await run(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync', '--auth=trust'], { cwd: parent, runAs });
}

/** Where a checkout keeps its pristine cluster for these binaries and this user (its files belong to whoever runs the server). */
export function templateCacheDir(bin: string, runAs: RunAs | undefined): string {
  // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)": data directories are compatible within a major version.
  const major = /\(PostgreSQL\) (\d+)/.exec(execFileSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  const binHash = createHash('sha256').update(bin).digest('hex').slice(0, 8);
  return join(PROJECT_ROOT, 'node_modules', '.cache', 'parley-postgres', `${major}-uid${runAs?.uid ?? process.getuid?.() ?? 0}-${binHash}`);
}

/**
 * Makes the pristine cluster at `templateDir` unless it is there already. `initdb` runs in `workDir`
 * (somewhere the postgres user can reach: the run's TMPDIR), and its result is copied into place
 * and renamed, so a server never copies a half-made template.
 */
export async function prepareTemplate(bin: string, templateDir: string, runAs: RunAs | undefined, workDir: string) {
  if (existsSync(join(templateDir, 'PG_VERSION'))) return;
  const building = join(workDir, `parley-pg-template-${process.pid}`);
  const staging = `${templateDir}.staging-${process.pid}`;
  mkdirSync(building);
  try {
    await initdb(bin, join(building, 'data'), runAs);
    mkdirSync(dirname(templateDir), { recursive: true });
    await promisify(execFile)('cp', ['-a', join(building, 'data'), staging]);
    try {
      renameSync(staging, templateDir);
    } catch (err) {
      if (!existsSync(join(templateDir, 'PG_VERSION'))) throw err; // else another run made it first
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
}

/** A fresh cluster at `dataDir`: a copy of the template when there is one, else its own initdb. */
export async function newCluster(bin: string, dataDir: string, runAs: RunAs | undefined, templateDir = process.env.PARLEY_PG_TEMPLATE) {
  if (templateDir && existsSync(join(templateDir, 'PG_VERSION'))) {
    if (runAs) checkReachable(dirname(dataDir), runAs);
    await promisify(execFile)('cp', ['-a', templateDir, dataDir]); // we copy (as root, if we are); -a keeps the postgres user's ownership
  } else {
    await initdb(bin, dataDir, runAs);
  }
}

/** The unix socket (inside the server's own temp dir) trusts; TCP on 127.0.0.1 only, with a password when one is set. */
export function writeHba(dataDir: string, password: boolean, runAs: RunAs | undefined) {
  const file = join(dataDir, 'pg_hba.conf');
  writeFileSync(file, ['local all all trust', `host all all 127.0.0.1/32 ${password ? 'scram-sha-256' : 'trust'}`, ''].join('\n'));
  if (runAs) chownSync(file, runAs.uid, runAs.gid);
}
