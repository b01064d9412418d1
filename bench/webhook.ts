// WhatsApp webhook ingestion: signature check + parse + de-dup + durable
// enqueue (one LMDB transaction), the turn excluded (the inbound workers are
// stopped), against a bare fastify route that only returns 200 — same client,
// same process, alternating blocks. p99 is client-side (request sent → 200 body
// read), reported three ways: with 32 in flight (mostly queueing on 2 cores), one
// request at a time (the route's own ack latency), and at steady offered rates.
//   npx tsx bench/webhook.ts
//   BENCH_ENGINE=postgres npx tsx bench/webhook.ts   (the enqueue is a PostgreSQL transaction on a server of
//   the bench's own, fsync on; target there: ack p99 < 10 ms at 1,000/s)
import Fastify from 'fastify';
import { signPayload } from '../src/whatsapp/signature.ts';
import { startParley } from '../test/support/parley.ts';
import { textMessage, WA, webhookBody } from '../test/support/whatsapp.ts';
import {
  alternate,
  alternateBlocks,
  benchEngine,
  benchStorage,
  httpLoad,
  httpRateLoadInChild,
  log,
  logStatements,
  merge,
  onEngine,
  parleyStorage,
  percentile,
  resetStatements,
  startBenchPostgres,
  summarize,
  type LoadResult,
} from './lib.ts';
import { MIN_ROUNDS, perRoundRatios, ratioLine, spread } from './rounds.ts';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? MIN_ROUNDS);
const RATES = (process.env.BENCH_RATES ?? '1000,3000').split(',').map(Number);

// Issue 16's target on PostgreSQL: ack p99 < 10 ms at a steady 1,000 webhooks/s.
const POSTGRES_TARGET = { rate: 1000, p99Ms: 10 };
const onPostgres = benchEngine() === 'postgres';
// The LMDB targets, printed as before; on PostgreSQL the issue sets none but the ack p99 at 1,000/s.
const target = (lmdb: string) => (onPostgres ? `(LMDB's target ${lmdb})` : `(target ${lmdb})`);
const postgres = await startBenchPostgres();
const storage = await benchStorage(postgres);
const parleyStorageConfig = storage ?? (await parleyStorage(postgres));
const p = await startParley({
  config: {
    storage: parleyStorageConfig,
    logging: { level: 'warn' },
    telemetry: { enabled: false },
    channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: 'http://127.0.0.1:9/v21.0', ...WA } },
  },
});
await p.runtime.whatsapp.inbound.stop(); // ingestion only: nothing dequeues
await resetStatements(storage?.url);
const bare = Fastify({ logger: false });
bare.post('/wa/webhook', async () => ({ ok: true }));
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

let n = 0;
const signedBody = () => {
  const raw = JSON.stringify(webhookBody([textMessage(`+1555400${String(n % 1000).padStart(4, '0')}`, 'hello', `wamid.bench.${++n}`)]));
  return { raw, sig: signPayload(raw, WA.app_secret) };
};
const bodies = new Map<number, { raw: string; sig: string }>();
const body = (i: number) => {
  const b = signedBody();
  bodies.set(i, b);
  return b.raw;
};
const headers = (i: number) => {
  const b = bodies.get(i) ?? signedBody();
  bodies.delete(i);
  return { 'content-type': 'application/json', 'x-hub-signature-256': b.sig };
};

log(`webhook ingestion${onEngine()}: ${ROUNDS} rounds × ${BLOCK_MS} ms per contender, ${CONCURRENCY} in flight`);
// headers() is called after body() for the same request index in httpLoad, so the signature matches.
const rounds = await alternateBlocks(ROUNDS, {
  parley: () => httpLoad({ origin: p.url(), path: '/wa/webhook', concurrency: CONCURRENCY, durationMs: BLOCK_MS, body, headers: (i) => headers(i) }),
  bare: () => httpLoad({ origin: bareUrl, path: '/wa/webhook', concurrency: CONCURRENCY, durationMs: BLOCK_MS, body, headers: (i) => headers(i) }),
});
const parley = summarize(merge(rounds.parley));
const baseline = summarize(merge(rounds.bare));
// The judged figure: the median of the per-round ratios (a round something else disturbed moves the spread only).
const throughput = spread(perRoundRatios(rounds.parley, rounds.bare, (b) => b.rps));
log(`parley : ${JSON.stringify(parley)}`);
log(`bare   : ${JSON.stringify(baseline)}`);
log(
  `whole-run ratio parley/bare = ${(parley.rps / baseline.rps).toFixed(2)}; p99 with ${CONCURRENCY} in flight = ${parley.p99} ms (bare ${baseline.p99} ms): queueing at saturation, the ack p99 is measured below`,
);
log(ratioLine('webhook ratio', throughput, target('≥ 0.60')));
// Ack latency without queueing in front of it: one request at a time.
log('ack latency, one request in flight:');
const single = await alternate(2, {
  parley: () => httpLoad({ origin: p.url(), path: '/wa/webhook', concurrency: 1, durationMs: 2000, body, headers: (i) => headers(i) }),
  bare: () => httpLoad({ origin: bareUrl, path: '/wa/webhook', concurrency: 1, durationMs: 2000, body, headers: (i) => headers(i) }),
});
log(`sequential: parley ${JSON.stringify(summarize(single.parley))}; bare ${JSON.stringify(summarize(single.bare))} ${target('p99 < 5 ms')}`);
// Ack latency under a steady offered load (open loop, generated from a child process so its timers
// are not delayed by the server's work and its request bodies are not in the server's heap): Meta
// allows one business number up to 1,000 messages/s (inbound and outbound together), and each reply
// comes back as up to 3 status webhooks.
let blocks = 0;
const steadyResults: [number, { p99: number; bareP99: number; parley: LoadResult }][] = [];
for (const rate of RATES) {
  log(`ack latency at ${rate} webhooks/s, open loop:`);
  const generator = () => ({ module: new URL('./webhook-requests.ts', import.meta.url), args: { block: `${rate}-${++blocks}` } });
  const steady = await alternate(2, {
    parley: () => httpRateLoadInChild({ origin: p.url(), path: '/wa/webhook', ratePerSecond: rate, durationMs: 3000, generator: generator() }),
    bare: () => httpRateLoadInChild({ origin: bareUrl, path: '/wa/webhook', ratePerSecond: rate, durationMs: 3000, generator: generator() }),
  });
  log(`at ${rate}/s: parley ${JSON.stringify(summarize(steady.parley))}; bare ${JSON.stringify(summarize(steady.bare))} ${target('p99 < 5 ms')}`);
  steadyResults.push([rate, { p99: summarize(steady.parley).p99, bareP99: summarize(steady.bare).p99, parley: steady.parley }]);
}
log(`queued jobs: ${p.runtime.whatsapp.inbound.depth()}`);
await logStatements(storage?.url, p.runtime.whatsapp.inbound.depth(), 'webhook');
log('summary:');
log(`  ${ratioLine('webhook ratio', throughput, target('≥ 0.60'))}`);
log(`  ack p99 one at a time ${summarize(single.parley).p99} ms ${target('< 5 ms')}`);
for (const [rate, r] of steadyResults) log(`  ack p99 at ${rate}/s ${r.p99} ms, bare ${r.bareP99} ms ${target('< 5 ms')}`);
if (onPostgres) {
  const judged = steadyResults.find(([rate]) => rate === POSTGRES_TARGET.rate)?.[1].parley;
  if (!judged) log(`  PostgreSQL target: not measured (BENCH_RATES has no ${POSTGRES_TARGET.rate})`);
  else {
    const l = [...judged.latenciesMs].sort((a, b) => a - b);
    const p99 = percentile(l, 0.99);
    log(
      `  PostgreSQL: ack at ${POSTGRES_TARGET.rate}/s p50 ${percentile(l, 0.5).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${l[l.length - 1].toFixed(2)} ms, ` +
        `${judged.errors} errors (target p99 < ${POSTGRES_TARGET.p99Ms} ms: ${p99 < POSTGRES_TARGET.p99Ms && judged.errors === 0 ? 'met' : 'missed'})`,
    );
  }
}
await bare.close();
await p.close();
await postgres?.close();
process.exit(0);
