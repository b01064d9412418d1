// Shared benchmark helpers: percentiles, fixed-concurrency HTTP load, and
// alternating measurement blocks (so a baseline and the system under test see
// the same machine noise).
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { startPostgres, type TestPostgres } from '../test/support/postgres.ts';
import { DEFAULT_DISK_RESERVE_MB } from '../src/store/lmdb/kv.ts';
import { alternateRounds } from './rounds.ts';

export const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  latenciesMs: number[];
}

export function summarize(r: LoadResult) {
  const l = [...r.latenciesMs].sort((a, b) => a - b);
  return { rps: Math.round(r.rps), p50: +percentile(l, 0.5).toFixed(2), p99: +percentile(l, 0.99).toFixed(2), errors: r.errors, requests: r.requests };
}

export function merge(results: LoadResult[]): LoadResult {
  const requests = results.reduce((n, r) => n + r.requests, 0);
  const seconds = results.reduce((n, r) => n + r.seconds, 0);
  return { requests, errors: results.reduce((n, r) => n + r.errors, 0), seconds, rps: requests / seconds, latenciesMs: results.flatMap((r) => r.latenciesMs) };
}

/** What every load generator sends: request i has body(i) and headers(i). */
interface RequestSpec {
  origin: string;
  path: string;
  method?: 'GET' | 'POST';
  headers?: (i: number) => Record<string, string>;
  body?: (i: number) => string;
  ok?: (status: number) => boolean;
}

/** Sends request `n` (its body already made, so making it is not timed) and reads the answer; resolves with whether it failed. */
async function sendOne(pool: Pool, o: RequestSpec, n: number, body: string | undefined): Promise<boolean> {
  try {
    const res = await pool.request({ path: o.path, method: o.method ?? 'POST', headers: o.headers?.(n), body });
    await res.body.arrayBuffer();
    return !(o.ok ?? ((s) => s < 400))(res.statusCode);
  } catch {
    return true;
  }
}

/** Keeps `concurrency` requests in flight for `durationMs`. */
export async function httpLoad(o: RequestSpec & { concurrency: number; durationMs: number }): Promise<LoadResult> {
  const pool = new Pool(o.origin, { connections: o.concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let requests = 0;
  let errors = 0;
  let i = 0;
  const end = performance.now() + o.durationMs;
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < end) {
      const n = i++;
      const body = o.body?.(n);
      const t0 = performance.now();
      if (await sendOne(pool, o, n, body)) errors++;
      latencies.push(performance.now() - t0);
      requests++;
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { requests, errors, seconds, rps: requests / seconds, latenciesMs: latencies };
}

/**
 * Open-loop load: starts requests at a fixed rate whatever the server does (a server that falls
 * behind is not quietly sent less), each measured from when it was handed to the connection pool,
 * so waiting for a free connection counts; the 1 ms pacing timer's own lateness does not.
 */
export async function httpRateLoad(o: RequestSpec & { ratePerSecond: number; durationMs: number; maxConnections?: number }): Promise<LoadResult> {
  const pool = new Pool(o.origin, { connections: o.maxConnections ?? 256, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const total = Math.floor((o.ratePerSecond * o.durationMs) / 1000);
  const send = (n: number) => {
    const body = o.body?.(n);
    const sentAt = performance.now();
    const p = sendOne(pool, o, n, body).then((failed) => {
      if (failed) errors++;
      latencies.push(performance.now() - sentAt);
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  while (sent < total) {
    const elapsed = performance.now() - started;
    const due = Math.min(total, Math.floor((elapsed * o.ratePerSecond) / 1000) + 1);
    for (; sent < due; sent++) send(sent);
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { requests: sent, errors, seconds, rps: sent / seconds, latenciesMs: latencies };
}

/**
 * `httpRateLoad` from a child process. The child builds its own requests with `generator` (a module
 * whose default export is `(count, args) => requests`): prepared here, thousands of bodies would live
 * in the measured server's heap and be promoted by its GC during the run.
 */
export function httpRateLoadInChild(o: {
  origin: string;
  path: string;
  ratePerSecond: number;
  durationMs: number;
  generator: { module: URL; args: unknown };
}): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./rate-load-child.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'] });
    child.once('message', (r) => resolve(r as LoadResult));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load generator exited with ${code}`))));
    child.send({ ...o, generator: { module: o.generator.module.href, args: o.generator.args } });
  });
}

/**
 * One unmeasured warm-up block per contender (JIT, caches, first connections), then `rounds` alternating blocks of
 * each (ABBA), logging each; returns every contender's measured blocks in round order.
 */
export async function alternateBlocks<T extends string>(rounds: number, contenders: Record<T, () => Promise<LoadResult>>): Promise<Record<T, LoadResult[]>> {
  for (const n of Object.keys(contenders) as T[]) log(`  warm-up ${n}: ${JSON.stringify(summarize(await contenders[n]()))}`);
  return alternateRounds(rounds, contenders, (n, r, res) => log(`  round ${r + 1}/${rounds} ${n}: ${JSON.stringify(summarize(res))}`));
}

/** Runs `rounds` alternating blocks of each contender; returns all blocks per contender, merged. */
export async function alternate<T extends string>(rounds: number, contenders: Record<T, () => Promise<LoadResult>>): Promise<Record<T, LoadResult>> {
  const blocks = await alternateRounds(rounds, contenders, (n, r, res) => log(`  round ${r + 1}/${rounds} ${n}: ${JSON.stringify(summarize(res))}`));
  return Object.fromEntries((Object.keys(blocks) as T[]).map((n) => [n, merge(blocks[n])])) as Record<T, LoadResult>;
}

/** The storage engine a bench measures: BENCH_ENGINE=lmdb (the default) or postgres. */
export function benchEngine(env: NodeJS.ProcessEnv = process.env): 'lmdb' | 'postgres' {
  const engine = env.BENCH_ENGINE || 'lmdb';
  if (engine !== 'lmdb' && engine !== 'postgres') throw new Error(`BENCH_ENGINE=${engine}: use lmdb or postgres`);
  return engine;
}

/** What a bench's header line adds for its engine: nothing on LMDB (the output as before), " on PostgreSQL" otherwise. */
export function onEngine(env: NodeJS.ProcessEnv = process.env): string {
  return benchEngine(env) === 'postgres' ? ' on PostgreSQL' : '';
}

/**
 * BENCH_PG_STATEMENTS=1: the bench's PostgreSQL loads pg_stat_statements and every database `benchStorage()`
 * makes has it, so a bench can count the statements (≈ round trips) its work ran (`logStatements()`).
 * It costs PostgreSQL a little CPU: leave it off for the figures that are judged.
 */
export const countStatements = (env: NodeJS.ProcessEnv = process.env) => env.BENCH_PG_STATEMENTS === '1';

/** A PostgreSQL server of the bench's own, whatever BENCH_ENGINE says (bench/engines.ts runs both engines). */
export async function benchPostgres(o: { fsync?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<TestPostgres> {
  const statements = countStatements(o.env);
  // BENCH_PG_SETTINGS="name=value,name=value": server settings to try (say which in BENCHMARKS.md with the figures).
  const extra = Object.fromEntries(
    (o.env ?? process.env).BENCH_PG_SETTINGS?.split(',')
      .filter(Boolean)
      .map((kv) => kv.split('=') as [string, string]) ?? [],
  );
  const server = await startPostgres({
    fsync: o.fsync ?? true,
    settings: Object.assign(statements ? { shared_preload_libraries: 'pg_stat_statements' } : {}, extra),
  });
  log(
    `PostgreSQL for this bench at ${server.url} (fsync ${o.fsync === false ? 'off' : 'on'}${statements ? ', pg_stat_statements' : ''}${Object.keys(extra).length ? `, ${JSON.stringify(extra)}` : ''})`,
  );
  return server;
}

/**
 * With BENCH_ENGINE=postgres, a PostgreSQL server of the bench's own (Debian's, in a temp dir, see
 * test/support/postgres.ts); undefined on LMDB. fsync stays on unless `fsync: false`: durable commits
 * are what the benches compare with LMDB's. Give each contender a database (`benchStorage()`) and
 * `close()` the server in a `finally`.
 */
export async function startBenchPostgres(o: { fsync?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<TestPostgres | undefined> {
  if (benchEngine(o.env) !== 'postgres') return undefined;
  return benchPostgres(o);
}

/**
 * Parley's `storage` section in a bench: a fresh database on `server` (`benchStorage()`), or on LMDB the production
 * disk reserve. The test harness keeps a 1 MB reserve (a test run opens hundreds of stores), with which a store
 * growing at a bench's pace starts a `fallocate` process every ~0.5 MB: starting those processes (the fork is
 * synchronous) was ~6% of the main thread's CPU in a proactive or turn bench, which production does not pay.
 */
export async function parleyStorage(
  server: TestPostgres | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ engine: 'postgres'; url: string } | { disk_reserve_mb: number }> {
  return (await benchStorage(server, env)) ?? { disk_reserve_mb: DEFAULT_DISK_RESERVE_MB };
}

/** Runs `sql` on `url` with a connection of its own. */
async function query<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Parley's `storage` section for a contender: a fresh database on `server` (so nothing another contender
 * wrote is in its tables), or undefined on LMDB (the harness's temp dir, as before).
 */
export async function benchStorage(
  server: TestPostgres | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ engine: 'postgres'; url: string } | undefined> {
  if (!server) return undefined;
  const url = await server.createDatabase();
  if (countStatements(env)) await query(url, 'CREATE EXTENSION pg_stat_statements');
  return { engine: 'postgres', url };
}

/** Forgets the statements counted so far (BENCH_PG_STATEMENTS=1; a no-op otherwise). */
export async function resetStatements(url: string | undefined): Promise<void> {
  if (url && countStatements()) await query(url, 'SELECT pg_stat_statements_reset()');
}

/** Logs the statements `url`'s database ran since `resetStatements()`, per `per` (e.g. 2,000 turns), most frequent first. */
export async function logStatements(url: string | undefined, per: number, unit: string): Promise<void> {
  if (!url || !countStatements()) return;
  const rows = await query<{ calls: string; ms: number; query: string }>(
    url,
    `SELECT calls, total_exec_time AS ms, query FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
     ORDER BY calls DESC LIMIT 25`,
  );
  const calls = rows.reduce((n, r) => n + Number(r.calls), 0);
  log(
    `PostgreSQL statements per ${unit} (pg_stat_statements; each is a round trip): ${(calls / per).toFixed(2)}; per statement: calls/${unit}, mean server time`,
  );
  for (const r of rows)
    log(
      `  ${(Number(r.calls) / per).toFixed(2).padStart(6)} ${((r.ms * 1000) / Number(r.calls)).toFixed(0).padStart(6)} µs  ${r.query.replace(/\s+/g, ' ').slice(0, 140)}`,
    );
}

const CLOCK_TICKS_PER_SECOND = 100; // Linux USER_HZ

/** The utime, stime, cutime and cstime fields of /proc/<pid>/stat, in ms; undefined once the process is gone. */
function procTimes(pid: number): { own: number; reapedChildren: number; ppid: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ms = (i: number) => (Number(f[i]) * 1000) / CLOCK_TICKS_PER_SECOND;
  return { own: ms(11) + ms(12), reapedChildren: ms(13) + ms(14), ppid: Number(f[1]) };
}

/** CPU time (ms, user + system, every thread) process `pid` has used so far. */
export function processCpuMs(pid: number): number {
  return procTimes(pid)?.own ?? NaN;
}

/**
 * CPU time (ms) a PostgreSQL server has used so far, all its processes: the postmaster, its live
 * children (backends, WAL writer, checkpointer…) and the children it has already reaped (cutime).
 */
export function postgresCpuMs(server: TestPostgres): number {
  const postmaster = Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const root = procTimes(postmaster);
  if (!root) return NaN;
  let total = root.own + root.reapedChildren;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const t = procTimes(Number(entry));
    if (t?.ppid === postmaster) total += t.own;
  }
  return total;
}

/** Transactions committed in `url`'s database so far (pg_stat_database: backends report within ~1 s, so wait before reading). */
export async function committedTransactions(url: string): Promise<number> {
  const rows = await query<{ n: string }>(url, 'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
  return Number(rows[0].n);
}
