// Shared benchmark helpers: percentiles, fixed-concurrency HTTP load, and
// alternating measurement blocks (so a baseline and the system under test see
// the same machine noise).
import { fork } from 'node:child_process';
import { Pool } from 'undici';
import { startPostgres, type TestPostgres } from '../test/support/postgres.ts';

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

/** Runs `rounds` alternating blocks of each contender; returns all blocks per contender. */
export async function alternate<T extends string>(rounds: number, contenders: Record<T, () => Promise<LoadResult>>): Promise<Record<T, LoadResult>> {
  const names = Object.keys(contenders) as T[];
  const blocks = Object.fromEntries(names.map((n) => [n, [] as LoadResult[]])) as Record<T, LoadResult[]>;
  for (let r = 0; r < rounds; r++) {
    for (const n of r % 2 === 0 ? names : [...names].reverse()) {
      const res = await contenders[n]();
      blocks[n].push(res);
      log(`  round ${r + 1}/${rounds} ${n}: ${JSON.stringify(summarize(res))}`);
    }
  }
  return Object.fromEntries(names.map((n) => [n, merge(blocks[n])])) as Record<T, LoadResult>;
}

/** The storage engine a bench measures: BENCH_ENGINE=lmdb (the default) or postgres. */
export function benchEngine(env: NodeJS.ProcessEnv = process.env): 'lmdb' | 'postgres' {
  const engine = env.BENCH_ENGINE || 'lmdb';
  if (engine !== 'lmdb' && engine !== 'postgres') throw new Error(`BENCH_ENGINE=${engine}: use lmdb or postgres`);
  return engine;
}

/**
 * With BENCH_ENGINE=postgres, a PostgreSQL server of the bench's own (Debian's, in a temp dir, see
 * test/support/postgres.ts); undefined on LMDB. fsync stays on unless `fsync: false`: durable commits
 * are what the benches compare with LMDB's. Give each contender a database (`createDatabase()`) and
 * `close()` the server in a `finally`.
 */
export async function startBenchPostgres(o: { fsync?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<TestPostgres | undefined> {
  if (benchEngine(o.env) !== 'postgres') return undefined;
  const server = await startPostgres({ fsync: o.fsync ?? true });
  log(`PostgreSQL for this bench at ${server.url} (fsync ${o.fsync === false ? 'off' : 'on'})`);
  return server;
}
