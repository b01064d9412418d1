// PostgreSQL for the store tests. INTERIM: replaced by test/support/postgres.ts (branch i16-pg-harness) once merged.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import pg from 'pg';

const BIN = '/usr/lib/postgresql/15/bin';
const asPostgres = (args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'pipe' });

export interface TestPostgres {
  url: string;
  stop(): Promise<void>;
  restart(): Promise<void>;
  running(): boolean;
  close(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

export async function startPostgres(): Promise<TestPostgres> {
  const dir = mkdtempSync('/tmp/parley-pg-'); // not under the run's TMPDIR: the postgres user cannot enter it
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
  chownSync(dir, uid, gid);
  asPostgres([`${BIN}/initdb`, '-D', `${dir}/data`, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  const port = await freePort();
  const start = () =>
    asPostgres([
      `${BIN}/pg_ctl`,
      '-D',
      `${dir}/data`,
      '-w',
      '-l',
      `${dir}/log`,
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`,
      'start',
    ]);
  const stop = () => asPostgres([`${BIN}/pg_ctl`, '-D', `${dir}/data`, '-w', '-m', 'fast', 'stop']);
  start();
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      stop();
      running = false;
    },
    restart: async () => {
      if (running) stop();
      start();
      running = true;
    },
    running: () => running,
    close: async () => {
      if (running) stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function createDatabase(adminUrl: string, name = `t_${randomBytes(6).toString('hex')}`): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export function createTestDatabase(): Promise<string> {
  return createDatabase(process.env.PARLEY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:54329/postgres');
}
