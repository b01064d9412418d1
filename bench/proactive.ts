// POST /proactive with durable guardrails (a mix of accepted and blocked:
// duplicates, not opted in, unknown customers) against a bare fastify route
// doing one LMDB write per request — same client, same process, alternating. With BENCH_ENGINE=postgres, Parley
// runs on a PostgreSQL of the bench's own (fsync on) and the bare route does one PostgreSQL INSERT per request
// (autocommit, on a pool of Parley's default size, in a database of its own): one durable write on the same engine.
// BENCH_CAP sets proactive.daily_cap (default 1e9, so the accepted share stays as
// designed; with a realistic cap such as 3, nearly every request soon meets the cap).
//   npx tsx bench/proactive.ts            BENCH_CAP=3 npx tsx bench/proactive.ts
//   BENCH_ENGINE=postgres npx tsx bench/proactive.ts
import Fastify from 'fastify';
import { open } from 'lmdb';
import pg from 'pg';
import { createCustomerRepo } from '../src/customers/repo.ts';
import { startParley, TEST_SECRET, tempDir } from '../test/support/parley.ts';
import { alternate, benchStorage, httpLoad, log, logStatements, onEngine, resetStatements, startBenchPostgres, summarize } from './lib.ts';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CAP = Number(process.env.BENCH_CAP ?? 1_000_000_000);

const postgres = await startBenchPostgres();
const storage = await benchStorage(postgres);
const p = await startParley({ config: { storage, logging: { level: 'warn' }, proactive: { enabled: true, daily_cap: CAP } } });
const customers = createCustomerRepo(p.services.store, p.services.clock);
for (let i = 0; i < 100; i++) {
  await customers.upsert({ externalId: `bench-${i}`, email: `b${i}@example.com` });
  if (i < 80) await customers.setOptIn(`bench-${i}`, true);
}
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
  const customer = k === 15 ? 'nobody' : k >= 13 ? `bench-${80 + (i % 20)}` : `bench-${i % 80}`;
  const dedupKey = k >= 10 && k < 13 ? `dup-${i % 80}` : `key-${++seq}`;
  return JSON.stringify({ customerExternalId: customer, channel: 'web', content: 'Your order has shipped', dedupKey });
};
const headers = () => ({ 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` });

await resetStatements(storage?.url);
log(`POST /proactive${onEngine()}: ${ROUNDS} rounds × ${BLOCK_MS} ms per contender, ${CONCURRENCY} in flight, daily_cap ${CAP}`);
const results = await alternate(ROUNDS, {
  parley: () => httpLoad({ origin: p.url(), path: '/proactive', concurrency: CONCURRENCY, durationMs: BLOCK_MS, body, headers }),
  bare: () => httpLoad({ origin: bareUrl, path: '/proactive', concurrency: CONCURRENCY, durationMs: BLOCK_MS, body, headers }),
});
const parley = summarize(results.parley);
const baseline = summarize(results.bare);
await p.services.telemetry.flush();
let accepted = 0;
for await (const e of p.services.store.telemetry.window('events', { since: 0, until: Date.now() + 60_000 })) if (e.type === 'proactive.accepted') accepted++;
log(`parley : ${JSON.stringify(parley)} (accepted ${accepted} of ${parley.requests})`);
log(`bare   : ${JSON.stringify(baseline)}`);
log(`throughput ratio parley/bare = ${(parley.rps / baseline.rps).toFixed(2)} (target ≥ 0.70)`);
await logStatements(storage?.url, parley.requests, 'request');
await bare.close();
await db.close();
await p.close();
await postgres?.close();
process.exit(0);
