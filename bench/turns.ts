// Conversation turns: N concurrent widget connections, the instant offline
// LLM and one SDK call per turn, against two baselines in the same process, in
// alternating rounds:
//  - the durable relay (the judged baseline): a raw `ws` relay doing the same hops
//    (client → server → backend socket → server → client) that commits the
//    customer's message to the same engine before forwarding it and the reply
//    before sending it (bench/durable-relay-store.ts);
//  - the raw relay: the same relay storing nothing (context: what durability costs).
// The figures are the medians of the per-round ratios with their spread
// (bench/rounds.ts). Then heap per active and per passivated conversation,
// measured over 10,000 conversations.
//   node --expose-gc --import tsx bench/turns.ts
//   BENCH_CONNECTIONS=200 node --expose-gc --import tsx bench/turns.ts
//   BENCH_ENGINE=postgres node --expose-gc --import tsx bench/turns.ts   (Parley and the durable relay on a
//   PostgreSQL of the bench's own, fsync on, a database each; bench/engines.ts compares the two engines in one run)
//   BENCH_ROUNDS (default 8), BENCH_BLOCK_MS (default 4000), BENCH_MEMORY_CONVERSATIONS (0: skip the heap figures)
import { WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import { createClient } from '../sdk/src/index.ts';
import { startParley, TEST_SECRET, type TestParley } from '../test/support/parley.ts';
import { openDurableRelayStore, type DurableRelayStore } from './durable-relay-store.ts';
import { log, merge, onEngine, parleyStorage, percentile, startBenchPostgres, type LoadResult } from './lib.ts';
import { alternateRounds, MIN_ROUNDS, perRoundRatios, ratioLine, spread } from './rounds.ts';
import { clients } from './widget-load.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1000);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? MIN_ROUNDS);
const MEMORY_CONVERSATIONS = Number(process.env.BENCH_MEMORY_CONVERSATIONS ?? 10_000);
const gc = (globalThis as { gc?: () => void }).gc;

/**
 * The baselines: a ws relay with a backend socket that answers like an SDK handler would. With `store`, it
 * commits the customer's message (durably, before forwarding it) and the reply (before sending it).
 */
async function relay(store?: DurableRelayStore) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const port = (server.address() as { port: number }).port;
  const pending = new Map<string, { ws: WebSocket; conversationId: string }>();
  let backend: WebSocket | undefined;
  let conversations = 0;
  server.on('connection', (ws, req) => {
    if (req.url === '/backend') {
      backend = ws;
      ws.on('message', async (d) => {
        const f = JSON.parse(d.toString());
        const client = pending.get(f.id);
        pending.delete(f.id);
        if (!client) return;
        const reply = { type: 'message', id: `r${f.id}`, role: 'assistant', text: `Order ${f.data.orderId} is ${f.data.status}.`, at: Date.now() };
        await store?.commit({ conversationId: client.conversationId, id: reply.id, role: 'assistant', text: reply.text, at: reply.at });
        client.ws.send(JSON.stringify(reply));
      });
      return;
    }
    const conversationId = `c${++conversations}`;
    ws.on('message', async (d) => {
      const f = JSON.parse(d.toString());
      pending.set(f.id, { ws, conversationId });
      await store?.commit({ conversationId, id: f.id, role: 'user', text: f.text, at: Date.now() });
      backend!.send(JSON.stringify({ type: 'invoke', id: f.id, name: 'getOrderStatus', args: { orderId: '1001' } }));
    });
  });
  const b = new WebSocket(`ws://127.0.0.1:${port}/backend`);
  b.on('message', (d) => {
    const f = JSON.parse(d.toString());
    b.send(JSON.stringify({ type: 'result', id: f.id, ok: true, data: { orderId: f.args.orderId, status: 'shipped' } }));
  });
  await new Promise<void>((r) => b.once('open', () => r()));
  return { url: `ws://127.0.0.1:${port}/client`, close: () => (b.close(), server.close()) };
}

const summary = (r: LoadResult) => {
  const l = [...r.latenciesMs].sort((a, b) => a - b);
  return { turnsPerSecond: Math.round(r.rps), p50: +percentile(l, 0.5).toFixed(1), p99: +percentile(l, 0.99).toFixed(1), turns: r.requests };
};

const postgres = await startBenchPostgres();
const p: TestParley = await startParley({
  config: { storage: await parleyStorage(postgres), logging: { level: 'warn' }, channels: { web: { rate_limit_per_minute: 1_000_000 } } },
});
const sdk = createClient();
sdk.expose(
  'getOrderStatus',
  { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
  async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }),
);
await sdk.listen({ url: p.url(), secret: TEST_SECRET });
const base = await relay();
const durableStore = await openDurableRelayStore(postgres);
const durable = await relay(durableStore);

log(
  `turns${onEngine()}: ${CONNECTIONS} connections, ${ROUNDS} rounds × ${BLOCK_MS} ms per contender (offline LLM, one SDK call per turn); durable relay: ${durableStore.describe}`,
);
const parleyClients = await clients(
  CONNECTIONS,
  `${p.url().replace('http', 'ws')}/widget/ws`,
  (i) => JSON.stringify({ type: 'init', customerId: `bench-${i}`, email: `b${i}@example.com` }),
  (f) => f.type === 'message',
);
const relayClients = await clients(
  CONNECTIONS,
  base.url,
  () => undefined,
  (f) => f.type === 'message',
);
const durableClients = await clients(
  CONNECTIONS,
  durable.url,
  () => undefined,
  (f) => f.type === 'message',
);
const contenders = {
  parley: () => parleyClients.block(BLOCK_MS),
  durable: () => durableClients.block(BLOCK_MS),
  relay: () => relayClients.block(BLOCK_MS),
};
for (const [name, block] of Object.entries(contenders)) log(`  warm-up ${name.padEnd(7)}: ${JSON.stringify(summary(await block()))}`);
const rounds = await alternateRounds(ROUNDS, contenders, (name, r, block) =>
  log(`  round ${r + 1}/${ROUNDS} ${name.padEnd(7)}: ${JSON.stringify(summary(block))}`),
);
const parley = summary(merge(rounds.parley));
const durableRelay = summary(merge(rounds.durable));
const relayed = summary(merge(rounds.relay));
const rps = (b: LoadResult) => b.rps;
log(`parley        : ${JSON.stringify(parley)}`);
log(`durable relay : ${JSON.stringify(durableRelay)} (${durableStore.commits()} commits)`);
log(`raw relay     : ${JSON.stringify(relayed)}`);
log(
  `per round parley/durable: ${perRoundRatios(rounds.parley, rounds.durable, rps)
    .map((x) => x.toFixed(2))
    .join(', ')}`,
);
log(ratioLine('raw relay ratio', spread(perRoundRatios(rounds.parley, rounds.relay, rps)), '(context: the relay stores nothing)'));
log(ratioLine('durable relay ratio', spread(perRoundRatios(rounds.parley, rounds.durable, rps)), '(target ≥ 0.50)'));
parleyClients.close();
relayClients.close();
durableClients.close();
base.close();
durable.close();
await durableStore.close();

// Memory per conversation actor.
if (MEMORY_CONVERSATIONS <= 0) log('memory: skipped (BENCH_MEMORY_CONVERSATIONS=0)');
else if (!gc) log('memory: run with node --expose-gc for heap figures');
else {
  const host = p.runtime.host;
  await host.passivate(host.list().map((c) => c.conversationId));
  await new Promise((r) => setTimeout(r, 200));
  gc();
  const before = process.memoryUsage().heapUsed;
  log(`memory: activating ${MEMORY_CONVERSATIONS} conversations (one turn each)…`);
  const ids: string[] = [];
  for (let i = 0; i < MEMORY_CONVERSATIONS; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, MEMORY_CONVERSATIONS - i) }, async (_, j) => {
        const r = await host.receive({ customerId: `mem-${i + j}`, externalId: `mem-${i + j}` }, 'web', { messageId: 'm1', text: 'hello' });
        ids.push(r.conversationId);
      }),
    );
    if (i % 2000 === 0) log(`  ${i + 500} activated`);
  }
  for (let k = 0; k < 200 && host.list().some((c) => c.state !== 'idle'); k++) await new Promise((r) => setTimeout(r, 50));
  await host.settle();
  gc();
  const active = process.memoryUsage().heapUsed;
  await host.passivate(ids);
  await host.settle();
  await new Promise((r) => setTimeout(r, 200));
  gc();
  const passivated = process.memoryUsage().heapUsed;
  log(`memory: ${host.activeCount()} still active after passivation`);
  log(`heap per active conversation     = ${((active - before) / MEMORY_CONVERSATIONS / 1024).toFixed(2)} KB (target ≤ 20 KB)`);
  log(`heap per passivated conversation = ${(Math.max(0, passivated - before) / MEMORY_CONVERSATIONS / 1024).toFixed(3)} KB (target ≤ 1 KB)`);
}
await sdk.close();
await p.close();
await postgres?.close();
process.exit(0);
