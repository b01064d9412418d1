// POST /proactive with durable guardrails (a mix of accepted and blocked:
// duplicates, not opted in, unknown customers) against two baselines — same
// client, same process, alternating rounds, the median of the per-round ratios:
//  - the durable route (the judged baseline): a plain fastify route making the same store reads and the same
//    single write transaction as Parley for each request, with no machine (bench/durable-proactive-route.ts),
//    on a store of its own on the same engine;
//  - the bare route (context): one durable write per request (LMDB put + flush; on PostgreSQL one autocommit
//    INSERT on a pool of Parley's default size, in a database of its own).
// With BENCH_ENGINE=postgres, everything runs on a PostgreSQL of the bench's own (fsync on), a database each.
// BENCH_CAP sets proactive.daily_cap (default 1e9, so the accepted share stays as
// designed; with a realistic cap such as 3, nearly every request soon meets the cap).
//   npx tsx bench/proactive.ts            BENCH_CAP=3 npx tsx bench/proactive.ts
//   BENCH_ENGINE=postgres npx tsx bench/proactive.ts
// BENCH_CPU_PROF=<dir>: after the rounds, one more block of Parley and one of the durable route, each under the
// in-process profiler (the same process runs the client: the profiles hold its share too), written as
// <dir>/proactive-parley.cpuprofile and proactive-durable.cpuprofile; `npx tsx bench/profile-shares.ts FILE` sums them.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import { open } from 'lmdb';
import pg from 'pg';
import { createCustomerRepo } from '../src/customers/repo.ts';
import { openStoreAt } from '../src/store/open.ts';
import type { Store } from '../src/store/repos.ts';
import { startParley, TEST_SECRET, tempDir } from '../test/support/parley.ts';
import { startDurableProactiveRoute } from './durable-proactive-route.ts';
import {
  alternateBlocks,
  benchStorage,
  parleyStorage,
  httpLoad,
  log,
  logStatements,
  merge,
  onEngine,
  resetStatements,
  startBenchPostgres,
  summarize,
} from './lib.ts';
import { MIN_ROUNDS, perRoundRatios, ratioLine, spread } from './rounds.ts';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? MIN_ROUNDS);
const CAP = Number(process.env.BENCH_CAP ?? 1_000_000_000);
// Enough customers that none piles up many sends: the cap check reads the customer's sends of the last 24 h, so with
// 100 customers it slowed as a run went on (8 µs at 30 sends, 22 µs at 450), the faster contender most, and the
// ratio drifted with the length of the run (rounds 0.42 … 0.81 in one run).
const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 2000);
const OPTED_IN = Math.round(CUSTOMERS * 0.8);

const postgres = await startBenchPostgres();
const storage = await benchStorage(postgres);
const parleyStorageConfig = storage ?? (await parleyStorage(postgres));
const p = await startParley({ config: { storage: parleyStorageConfig, logging: { level: 'warn' }, proactive: { enabled: true, daily_cap: CAP } } });
/** The same customers in a store, 80% of them opted in. */
async function seed(store: Store) {
  const customers = createCustomerRepo(store, p.services.clock);
  for (let i = 0; i < CUSTOMERS; i++) {
    await customers.upsert({ externalId: `bench-${i}`, email: `b${i}@example.com` });
    if (i < OPTED_IN) await customers.setOptIn(`bench-${i}`, true);
  }
}
await seed(p.services.store);
const durableStore = await openStoreAt(postgres ? (await benchStorage(postgres))!.url : `lmdb:${tempDir('bench-durable-route-')}`);
await seed(durableStore);
const durable = await startDurableProactiveRoute(durableStore, { dailyCap: CAP, dedupWindowHours: p.services.config.proactive.dedup_window_hours });
/** The bare route's one durable write, on the bench's engine. */
async function oneWrite(): Promise<{ write: (customer: string) => Promise<unknown>; close: () => Promise<void> }> {
  if (!postgres) {
    const db = open({ path: tempDir('bench-lmdb-') });
    return { write: (customer) => db.put(`k${Math.random()}`, { customer, at: Date.now() }), close: () => db.close() };
  }
  const pool = new pg.Pool({ connectionString: (await benchStorage(postgres))!.url, max: 10 });
  await pool.query('CREATE TABLE writes (k text PRIMARY KEY, customer text NOT NULL, at bigint NOT NULL)');
  const insert = { name: 'bare_write', text: 'INSERT INTO writes (k, customer, at) VALUES ($1, $2, $3)' };
  return { write: (customer) => pool.query(Object.assign({ values: [`k${Math.random()}`, customer, Date.now()] }, insert)), close: () => pool.end() };
}
const db = await oneWrite();
const bare = Fastify({ logger: false });
bare.post('/proactive', async (request) => {
  const body = request.body as { customerExternalId: string };
  await db.write(body.customerExternalId);
  return { accepted: true, messageId: 'x' };
});
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

let seq = 0;
// 10 in 16: accepted (fresh key); 3: duplicate key; 2: not opted in; 1: unknown customer.
const body = (i: number) => {
  const k = i % 16;
  const customer = k === 15 ? 'nobody' : k >= 13 ? `bench-${OPTED_IN + (i % (CUSTOMERS - OPTED_IN))}` : `bench-${i % OPTED_IN}`;
  const dedupKey = k >= 10 && k < 13 ? `dup-${i % OPTED_IN}` : `key-${++seq}`;
  return JSON.stringify({ customerExternalId: customer, channel: 'web', content: 'Your order has shipped', dedupKey });
};
const headers = () => ({ 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` });

await resetStatements(storage?.url);
log(`POST /proactive${onEngine()}: ${ROUNDS} rounds × ${BLOCK_MS} ms per contender, ${CONCURRENCY} in flight, daily_cap ${CAP}, ${CUSTOMERS} customers`);
const load = (origin: string) => () => httpLoad({ origin, path: '/proactive', concurrency: CONCURRENCY, durationMs: BLOCK_MS, body, headers });
const rounds = await alternateBlocks(ROUNDS, { parley: load(p.url()), durable: load(durable.url), bare: load(bareUrl) });
const parley = summarize(merge(rounds.parley));
const durableRoute = summarize(merge(rounds.durable));
const baseline = summarize(merge(rounds.bare));
await p.services.telemetry.flush();
let accepted = 0;
for await (const e of p.services.store.telemetry.window('events', { since: 0, until: Date.now() + 60_000 })) if (e.type === 'proactive.accepted') accepted++;
const rps = (b: { rps: number }) => b.rps;
log(`parley  : ${JSON.stringify(parley)} (accepted ${accepted} of ${parley.requests})`);
log(`durable : ${JSON.stringify(durableRoute)}`);
log(`bare    : ${JSON.stringify(baseline)}`);
log(
  `per round parley/durable: ${perRoundRatios(rounds.parley, rounds.durable, rps)
    .map((x) => x.toFixed(2))
    .join(', ')}`,
);
log(ratioLine('bare route ratio', spread(perRoundRatios(rounds.parley, rounds.bare, rps)), '(context: one write per request)'));
log(ratioLine('durable route ratio', spread(perRoundRatios(rounds.parley, rounds.durable, rps)), '(target ≥ 0.70)'));
await logStatements(storage?.url, parley.requests, 'request');
if (process.env.BENCH_CPU_PROF) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  for (const [name, origin] of [
    ['parley', p.url()],
    ['durable', durable.url],
  ] as const) {
    await session.post('Profiler.start');
    const cpu = process.cpuUsage();
    const block = await load(origin)();
    const used = process.cpuUsage(cpu);
    const { profile } = await session.post('Profiler.stop');
    const file = join(process.env.BENCH_CPU_PROF, `proactive-${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    log(
      `profile ${name}: ${Math.round(block.requests / (BLOCK_MS / 1000))} requests/s, ${Math.round((used.user + used.system) / block.requests)} µs of CPU per request (client included) → ${file}`,
    );
  }
  session.disconnect();
}
await bare.close();
await durable.close();
await durableStore.close();
await db.close();
await p.close();
await postgres?.close();
process.exit(0);
