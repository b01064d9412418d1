// A real PostgreSQL server for tests, benchmarks and `npm run pg:start`: Debian's binaries, `initdb`
// into a fresh temp dir (run as the `postgres` user when we are root: PostgreSQL refuses root),
// listening on 127.0.0.1 only with trust auth (or a password), its unix socket inside that dir.
// It can be stopped or killed and started again on the same port and data: the fault tests need
// "the database goes away and comes back". close() leaves nothing behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { childScope } from './child-processes.ts';
import { findPostgresBin, postgresRunAs } from './postgres-binaries.ts';
import { newCluster, postgresEnv, writeHba } from './postgres-cluster.ts';
import { pickPostgresPort } from './postgres-port.ts';
import { reapPostgres, signalPostgres, waitPidsGone } from './postgres-processes.ts';
import { tempDir } from './tmp.ts';

export interface PostgresOptions {
  /**
   * false: `fsync`, `synchronous_commit` and `full_page_writes` off. Faster, but an OS crash or power
   * loss may lose or corrupt committed data: never for a test or bench that claims durability.
   * Default: PostgreSQL's own (all on).
   */
  fsync?: boolean;
  /** The suite opens many pools at once. Default 300. */
  maxConnections?: number;
  /** TCP connections must give this password (scram-sha-256) and `url` carries it; default: trust. */
  password?: string;
  /** A fixed port (`npm run pg:start -- --port N`); default: a free one, chosen again on a collision. */
  port?: number;
  /** More `postgres -c name=value` settings. */
  settings?: Record<string, string | number>;
}

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`: the superuser on the `postgres` database. */
  readonly url: string;
  readonly port: number;
  /** The temp dir: `data/` (the cluster) and `socket/` (its unix socket). */
  readonly dir: string;
  readonly dataDir: string;
  /** A new empty database (a random name by default); resolves to its URL. */
  createDatabase(name?: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** Fast shutdown (SIGINT): clients are disconnected, data kept; `restart()` brings it back. */
  stop(): Promise<void>;
  /**
   * Sends `signal` (default SIGKILL) to the server; SIGKILL, SIGSTOP and SIGCONT reach every one of
   * its processes. Resolves once they have all exited, except for SIGSTOP, SIGCONT and SIGHUP.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data (stopping it first if it runs); a killed one recovers from its WAL. */
  restart(): Promise<void>;
  running(): boolean;
  /** The server's log (the last 256 KiB), for failure messages. */
  log(): string;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

const READY = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000; // initdb and recovery on a loaded 2-core machine
const STOP_TIMEOUT_MS = 30_000;
const LOG_LIMIT = 256 * 1024;
const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The URL of database `name` on the server at `adminUrl`. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The shared server's database with every migration applied (test/global-setup.ts makes it): a test database copied
 * from it skips migrating, which costs a Parley start on PostgreSQL about half a second on this machine.
 */
export const MIGRATED_TEMPLATE = 'parley_migrated';

/**
 * Creates a database on the server at `adminUrl` (a superuser URL), empty or a copy of `template`; resolves to its URL.
 * PostgreSQL 15+ copies by files (`STRATEGY FILE_COPY`), several times faster for small databases than through WAL.
 */
export async function createDatabase(adminUrl: string, name = `t_${randomBytes(6).toString('hex')}`, o: { template?: string } = {}): Promise<string> {
  if (!DATABASE_NAME.test(name)) throw new Error(`database name ${JSON.stringify(name)}: use a-z, 0-9 and _ (at most 63)`);
  if (o.template !== undefined && !DATABASE_NAME.test(o.template)) throw new Error(`template name ${JSON.stringify(o.template)}: use a-z, 0-9 and _`);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const version = Number((await client.query<{ server_version_num: string }>('SHOW server_version_num')).rows[0].server_version_num);
    const template = o.template === undefined ? '' : ` TEMPLATE "${o.template}"`;
    await client.query(`CREATE DATABASE "${name}"${template}${version >= 150000 ? ' STRATEGY FILE_COPY' : ''}`);
  } finally {
    await client.end();
  }
  return databaseUrl(adminUrl, name);
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  if (!DATABASE_NAME.test(name)) throw new Error(`database name ${JSON.stringify(name)}: use a-z, 0-9 and _ (at most 63)`);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** The server's own process, and the moment every process of the server has closed its end of the log pipes. */
interface Postmaster {
  child: ChildProcess;
  gone: Promise<void>;
}

class PortInUse extends Error {}

function serverSettings(o: PostgresOptions, version: number): Record<string, string | number> {
  const settings: Record<string, string | number> = { max_connections: o.maxConnections ?? 300 };
  // After a crash PostgreSQL syncs its whole data directory before recovering: one syncfs() instead of
  // an fsync per file (~1,500 files) takes a killed test server's restart from ~4 s to ~1.5 s here.
  if (version >= 14) settings.recovery_init_sync_method = 'syncfs';
  if (o.fsync === false) Object.assign(settings, { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' });
  return Object.assign(settings, o.settings);
}

/** Sets the superuser's password over the unix socket (which trusts), so TCP clients must give it. */
async function setPassword(socketDir: string, port: number, password: string) {
  const client = new pg.Client({ host: socketDir, port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    await client.query(`SET password_encryption = 'scram-sha-256'`);
    await client.query(`ALTER ROLE postgres PASSWORD ${client.escapeLiteral(password)}`);
  } finally {
    await client.end();
  }
}

export async function startPostgres(o: PostgresOptions = {}): Promise<TestPostgres> {
  const bin = findPostgresBin();
  const runAs = postgresRunAs();
  const dir = tempDir('parley-pg-'); // under the test run's TMPDIR, which the global teardown sweeps
  const dataDir = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  mkdirSync(socketDir);
  if (runAs) for (const d of [dir, socketDir]) chownSync(d, runAs.uid, runAs.gid);
  let logText = '';
  const appendLog = (chunk: string) => {
    logText += chunk;
    if (logText.length > LOG_LIMIT) logText = logText.slice(-LOG_LIMIT);
  };
  let current: Postmaster | undefined;
  // Every postmaster of this server (restart() may run in a later test) dies with the test or file that made it.
  const scope = childScope();

  const spawnServer = (port: number): Promise<Postmaster> => {
    const version = Number(readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim());
    const flags = Object.entries(serverSettings(o, version)).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    const child = scope.track(
      spawn(join(bin, 'postgres'), ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', socketDir, ...flags], {
        cwd: dir,
        uid: runAs?.uid,
        gid: runAs?.gid,
        env: postgresEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      { kill: (pid) => signalPostgres(pid, 'SIGKILL') }, // its backends too: they called setsid(), no group reaches them
    );
    // 'close' comes once the postmaster has exited AND every backend has closed the inherited pipes:
    // only then may a new postmaster start on the same data (nothing attached to its shared memory).
    const gone = new Promise<void>((resolve) => child.once('close', () => resolve()));
    let sinceStart = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        signalPostgres(child.pid!, 'SIGKILL');
        reject(new Error(`PostgreSQL did not become ready within ${START_TIMEOUT_MS} ms:\n${sinceStart}`));
      }, START_TIMEOUT_MS);
      const onData = (d: Buffer) => {
        const text = d.toString();
        appendLog(text);
        sinceStart += text;
        if (sinceStart.includes(READY)) {
          clearTimeout(timer);
          resolve({ child, gone });
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        const why = `PostgreSQL exited with ${code ?? signal} before it was ready:\n${sinceStart}`;
        void gone.then(() => reject(/could not bind|Address already in use/.test(sinceStart) ? new PortInUse(why) : new Error(why)));
      });
    });
  };

  const waitGone = async (pm: Postmaster, what: string) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`PostgreSQL still running ${STOP_TIMEOUT_MS} ms after ${what}:\n${logText.slice(-4000)}`)), STOP_TIMEOUT_MS);
    });
    try {
      await Promise.race([pm.gone, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  const isRunning = () => current !== undefined && current.child.exitCode === null && current.child.signalCode === null;

  /** SIGINT: fast shutdown (a checkpoint: data kept, restart is quick); SIGQUIT: immediate (no checkpoint, for close()). */
  const shutdown = async (signal: 'SIGINT' | 'SIGQUIT') => {
    const pm = current;
    if (!pm) return;
    if (isRunning()) {
      signalPostgres(pm.child.pid!, 'SIGCONT'); // a SIGSTOPped server would not act on it
      signalPostgres(pm.child.pid!, signal);
    }
    await waitGone(pm, signal);
    current = undefined;
  };
  const stop = () => shutdown('SIGINT');

  try {
    await newCluster(bin, dataDir, runAs);
    writeHba(dataDir, o.password !== undefined, runAs);
    let port = o.port ?? (await pickPostgresPort());
    for (let attempt = 1; ; attempt++) {
      try {
        current = await spawnServer(port);
        break;
      } catch (err) {
        if (!(err instanceof PortInUse) || o.port !== undefined || attempt >= 5) throw err;
        port = await pickPostgresPort();
      }
    }
    if (o.password !== undefined) await setPassword(socketDir, port, o.password);
    const auth = o.password !== undefined ? `postgres:${encodeURIComponent(o.password)}` : 'postgres';
    const url = `postgres://${auth}@127.0.0.1:${port}/postgres`;

    return {
      url,
      port,
      dir,
      dataDir,
      createDatabase: (name) => createDatabase(url, name),
      dropDatabase: (name) => dropDatabase(url, name),
      stop,
      running: isRunning,
      log: () => logText,
      async kill(signal = 'SIGKILL') {
        const pm = current;
        if (!pm || !isRunning()) return;
        const children = signalPostgres(pm.child.pid!, signal);
        if (signal === 'SIGSTOP' || signal === 'SIGCONT' || signal === 'SIGHUP') return;
        await waitGone(pm, signal);
        if (signal === 'SIGKILL') await waitPidsGone(children, STOP_TIMEOUT_MS);
        current = undefined;
      },
      async restart() {
        await stop();
        // The port was ours a moment ago; something may hold it briefly (e.g. a connection in TIME_WAIT on its far side).
        const until = Date.now() + 10_000;
        for (;;) {
          try {
            current = await spawnServer(port);
            return;
          } catch (err) {
            if (!(err instanceof PortInUse) || Date.now() > until) throw err;
            await new Promise((r) => setTimeout(r, 200));
          }
        }
      },
      async close() {
        try {
          await shutdown('SIGQUIT'); // its data goes anyway: skip the shutdown checkpoint
        } finally {
          await reapPostgres(dataDir);
          await rm(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    if (current) signalPostgres(current.child.pid!, 'SIGKILL');
    await current?.gone;
    await reapPostgres(dataDir);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
