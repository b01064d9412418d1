// The PostgreSQL the tests stand on (test/support/postgres.ts): a real server that can be stopped,
// killed and started again on the same port and data, and leaves nothing behind.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { benchEngine, benchStorage, committedTransactions, postgresCpuMs, startBenchPostgres } from '../../bench/lib.ts';
import { reapPostgres, running } from '../support/postgres-processes.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { createTestDatabase, sharedPostgresUrl } from '../support/shared-postgres.ts';

const servers: TestPostgres[] = [];
async function server(o: Parameters<typeof startPostgres>[0] = {}) {
  const s = await startPostgres(o);
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function query<R extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

async function connectError(url: string): Promise<NodeJS.ErrnoException> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  const err = await client.connect().then(
    () => undefined,
    (e: NodeJS.ErrnoException) => e,
  );
  await client.end().catch(() => undefined);
  if (!err) throw new Error(`${url} accepted a connection`);
  return err;
}

function postmasterPid(s: TestPostgres): number {
  return Number(readFileSync(`${s.dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
}

/** The postmaster and its children (checkpointer, WAL writer, backends…). */
function serverPids(s: TestPostgres): number[] {
  const postmaster = postmasterPid(s);
  const children = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter(([, ppid]) => ppid === postmaster)
    .map(([pid]) => pid);
  return [postmaster, ...children];
}

function shmIdOf(s: TestPostgres): string {
  return readFileSync(`${s.dataDir}/postmaster.pid`, 'utf8').split('\n')[6].trim().split(/\s+/)[1];
}

function sharedMemorySegments(): string[] {
  return execFileSync('ipcs', ['-m'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith('0x'))
    .map((line) => line.split(/\s+/)[1]);
}

describe('a test PostgreSQL', () => {
  it('is a real server on 127.0.0.1: a new database is empty and takes tables and rows', async () => {
    const s = await server();
    expect(s.url).toBe(`postgres://postgres@127.0.0.1:${s.port}/postgres`);
    const [{ version, listen }] = await query<{ version: string; listen: string }>(
      s.url,
      `SELECT current_setting('server_version_num')::int AS version, current_setting('listen_addresses') AS listen`,
    );
    expect(Number(version)).toBeGreaterThanOrEqual(130000);
    expect(listen).toBe('127.0.0.1');

    const url = await s.createDatabase('harness_check');
    expect(url).toBe(`postgres://postgres@127.0.0.1:${s.port}/harness_check`);
    expect(await query(url, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)).toEqual([]);
    await query(url, 'CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)');
    await query(url, 'INSERT INTO notes VALUES ($1, $2), ($3, $4)', [1, 'one', 2, 'two']);
    expect(await query(url, 'SELECT body FROM notes ORDER BY id')).toEqual([{ body: 'one' }, { body: 'two' }]);
    // Another database of the same server does not see them.
    const other = await s.createDatabase();
    expect(await query(other, `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'notes'`)).toEqual([{ n: 0 }]);
    await s.dropDatabase('harness_check');
    expect(await query(s.url, `SELECT datname FROM pg_database WHERE datname = 'harness_check'`)).toEqual([]);
  });

  it('keeps durable settings by default and turns fsync off only when asked', async () => {
    const [durable, fast] = await Promise.all([server(), server({ fsync: false })]);
    const settings = `SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync, current_setting('max_connections')::int AS max`;
    expect(await query(durable.url, settings)).toEqual([{ fsync: 'on', sync: 'on', max: 300 }]);
    expect(await query(fast.url, settings)).toEqual([{ fsync: 'off', sync: 'off', max: 300 }]);
  });

  it('stops and restarts on the same port with its data kept', async () => {
    const s = await server();
    const url = await s.createDatabase('kept');
    await query(url, 'CREATE TABLE t (v text)');
    await query(url, `INSERT INTO t VALUES ('before the stop')`);
    await s.stop();
    expect(s.running()).toBe(false);
    expect((await connectError(url)).code).toBe('ECONNREFUSED');
    await s.restart();
    expect(s.running()).toBe(true);
    expect(s.url).toBe(`postgres://postgres@127.0.0.1:${s.port}/postgres`);
    expect(await query(url, 'SELECT v FROM t')).toEqual([{ v: 'before the stop' }]);
  });

  it('SIGKILLed, every process of it is gone at once; started again it recovers every committed row', async () => {
    const s = await server();
    const url = await s.createDatabase();
    await query(url, 'CREATE TABLE t (v int)');
    await query(url, 'INSERT INTO t SELECT generate_series(1, 1000)');
    // An open session: its backend must die with the postmaster, not linger holding the shared memory.
    const held = new pg.Client({ connectionString: url });
    held.on('error', () => undefined);
    await held.connect();
    const before = serverPids(s);
    expect(before.length).toBeGreaterThan(3); // postmaster, checkpointer, walwriter, the held backend…

    await s.kill('SIGKILL');
    expect(before.filter(running)).toEqual([]);
    expect(s.running()).toBe(false);
    expect((await connectError(url)).code).toBe('ECONNREFUSED');
    await held.end().catch(() => undefined);

    await s.restart();
    expect(s.log()).toContain('database system was interrupted');
    expect(await query(url, 'SELECT count(*)::int AS n, sum(v)::int AS sum FROM t')).toEqual([{ n: 1000, sum: 500500 }]);
  });

  it('SIGSTOPped, it hangs (a connection times out); SIGCONT and it answers again', async () => {
    const s = await server();
    await s.kill('SIGSTOP');
    const err = await connectError(s.url);
    expect(err.message).toMatch(/timeout/i);
    await s.kill('SIGCONT');
    expect(await query(s.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('two servers at once get different ports and separate data', async () => {
    const [a, b] = await Promise.all([server(), server()]);
    expect(a.port).not.toBe(b.port);
    expect(a.dir).not.toBe(b.dir);
    await query(a.url, 'CREATE TABLE only_on_a (v int)');
    expect(await query(b.url, `SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'only_on_a'`)).toEqual([{ n: 0 }]);
  });

  it('with a password, TCP clients must give it', async () => {
    const s = await server({ password: 'p@ss word/1' });
    expect(s.url).toBe(`postgres://postgres:p%40ss%20word%2F1@127.0.0.1:${s.port}/postgres`);
    expect(await query(s.url, 'SELECT current_user AS who')).toEqual([{ who: 'postgres' }]);
    const wrong = s.url.replace('p%40ss%20word%2F1', 'wrong');
    expect((await connectError(wrong)).message).toBe('password authentication failed for user "postgres"');
  });

  it('close() leaves no process, no directory and no shared memory, even after a SIGKILL', async () => {
    const s = await startPostgres();
    await s.kill('SIGKILL');
    expect(sharedMemorySegments()).toContain(shmIdOf(s)); // what a killed server leaves for the next start
    await s.restart();
    const pids = serverPids(s);
    const shmid = shmIdOf(s);
    await s.kill('SIGKILL');
    await s.close();
    expect(existsSync(s.dir)).toBe(false);
    expect(pids.filter(running)).toEqual([]);
    expect(sharedMemorySegments()).not.toContain(shmid);
  });

  it('a server a test forgot to close is killed by the teardown sweep', async () => {
    const s = await server();
    const pids = serverPids(s);
    const shmid = shmIdOf(s);
    expect(await reapPostgres(s.dataDir)).toBe(true);
    expect(pids.filter(running)).toEqual([]);
    expect(sharedMemorySegments()).not.toContain(shmid);
    expect(await reapPostgres(s.dataDir)).toBe(false);
  });
});

describe('the run-wide PostgreSQL (global setup)', () => {
  it('is reachable from a test worker, and gives each test file its own empty database', async () => {
    const url = sharedPostgresUrl();
    expect(url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    expect(await query(url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    expect(a).not.toBe(b);
    await query(a, 'CREATE TABLE mine (v int)');
    expect(await query(b, `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)).toEqual([{ n: 0 }]);
  });
});

describe("the benchmarks' PostgreSQL (bench/lib.ts)", () => {
  it('BENCH_ENGINE=postgres starts a server of its own with fsync on; lmdb (the default) starts none; anything else is refused', async () => {
    expect(benchEngine({})).toBe('lmdb');
    expect(() => benchEngine({ BENCH_ENGINE: 'sqlite' })).toThrow('BENCH_ENGINE=sqlite: use lmdb or postgres');
    expect(await startBenchPostgres({ env: { BENCH_ENGINE: 'lmdb' } })).toBeUndefined();
    const bench = await startBenchPostgres({ env: { BENCH_ENGINE: 'postgres' } });
    if (!bench) throw new Error('no server for BENCH_ENGINE=postgres');
    servers.push(bench);
    expect(bench.url).not.toBe(sharedPostgresUrl());
    const url = await bench.createDatabase();
    expect(await query(url, `SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync`)).toEqual([{ fsync: 'on', sync: 'on' }]);
  });

  it("gives each contender a fresh database, counts its commits, and reads the server's CPU over all its processes", async () => {
    const bench = (await startBenchPostgres({ env: { BENCH_ENGINE: 'postgres' } }))!;
    servers.push(bench);
    expect(await benchStorage(undefined)).toBeUndefined(); // LMDB: the harness's temp dir, as before
    const a = (await benchStorage(bench, {}))!;
    const b = (await benchStorage(bench, {}))!;
    expect(a.engine).toBe('postgres');
    expect(a.url).not.toBe(b.url);
    await query(a.url, 'CREATE TABLE t (v int)');
    expect(await query(b.url, `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)).toEqual([{ n: 0 }]);

    const commitsBefore = await committedTransactions(a.url);
    const cpuBefore = postgresCpuMs(bench);
    // Work a backend does and then exits with: its CPU is counted only through the postmaster's reaped children.
    await query(a.url, 'INSERT INTO t SELECT generate_series(1, 300000)');
    for (let i = 0; i < 20; i++) await query(a.url, 'INSERT INTO t VALUES (1)');
    // Backends report their statistics about a second later (more on a busy machine): wait for them, generously.
    const deadline = Date.now() + 60_000;
    let cpu: number;
    let commits: number;
    do {
      await new Promise((r) => setTimeout(r, 250));
      cpu = postgresCpuMs(bench) - cpuBefore;
      commits = (await committedTransactions(a.url)) - commitsBefore;
    } while ((cpu <= 50 || commits < 21) && Date.now() < deadline);
    expect(cpu).toBeGreaterThan(50); // counted at all (a server whose backends went uncounted reads ~0)
    expect(commits).toBeGreaterThanOrEqual(21);
  }, 120_000);
});
