// Cluster throughput (issue 17, part 9): conversation turns/s on one PostgreSQL (a server of this bench's own, fsync
// on) served by one Parley node, and by two, on this machine, in alternating blocks (ABBA). The same closed-loop
// widget load as bench/engines.ts (instant offline LLM, one SDK call per turn); with two nodes half the widgets are
// on each, and each node has the backend's SDK connected (so the invoke stays on the node). Per block: turns/s, and
// each node's CPU per turn of the cluster (every thread, /proc) and PostgreSQL's.
//   npx tsx bench/cluster-turns.ts
//   BENCH_CONNECTIONS=100 BENCH_ROUNDS=4 BENCH_BLOCK_MS=4000 npx tsx bench/cluster-turns.ts
import { spawnParley, tempDir } from '../test/support/parley.ts';
import { benchPostgres, log, percentile, postgresCpuMs, processCpuMs } from './lib.ts';
import { clients } from './widget-load.ts';
import { orderStatusBackend } from './order-backend.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 200);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

const server = await benchPostgres();
const url = await server.createDatabase();
const start = (nodeId: string) =>
  spawnParley({
    storagePath: tempDir('parley-cluster-turns-'),
    config: {
      storage: { engine: 'postgres', url },
      cluster: { node_id: nodeId },
      logging: { level: 'warn' },
      channels: { web: { rate_limit_per_minute: 1_000_000 } },
    },
  });
const nodes = [await start('node-a'), await start('node-b')];
const sdks = await Promise.all(nodes.map((p) => orderStatusBackend(p.url)));
const widgets = (p: (typeof nodes)[number], prefix: string, n: number) =>
  clients(
    n,
    `${p.url.replace('http', 'ws')}/widget/ws`,
    (i) => JSON.stringify({ type: 'init', customerId: `${prefix}-${i}`, email: `${prefix}${i}@example.com` }),
    (f) => f.type === 'message',
  );
log(`cluster turns: ${CONNECTIONS} widgets, ${ROUNDS} rounds × ${BLOCK_MS} ms per contender (offline LLM, one SDK call per turn), ABBA`);
const loads = {
  one: [await widgets(nodes[0], 'one', CONNECTIONS)],
  two: [await widgets(nodes[0], 'two-a', CONNECTIONS / 2), await widgets(nodes[1], 'two-b', CONNECTIONS / 2)],
};
type Contender = keyof typeof loads;

interface Block {
  rps: number;
  turns: number;
  cpuUsPerTurn: number[];
  postgresUsPerTurn: number;
  latenciesMs: number[];
}
async function block(c: Contender): Promise<Block> {
  const before = { nodes: nodes.map((p) => processCpuMs(p.child.pid!)), postgres: postgresCpuMs(server) };
  const results = await Promise.all(loads[c].map((l) => l.block(BLOCK_MS)));
  const turns = results.reduce((n, r) => n + r.requests, 0);
  const seconds = Math.max(...results.map((r) => r.seconds));
  return {
    rps: turns / seconds,
    turns,
    cpuUsPerTurn: nodes.map((p, i) => ((processCpuMs(p.child.pid!) - before.nodes[i]) * 1000) / turns),
    postgresUsPerTurn: ((postgresCpuMs(server) - before.postgres) * 1000) / turns,
    latenciesMs: results.flatMap((r) => r.latenciesMs),
  };
}
const show = (b: Block) =>
  `${Math.round(b.rps)} turns/s; CPU per turn: node-a ${b.cpuUsPerTurn[0].toFixed(0)} µs, node-b ${b.cpuUsPerTurn[1].toFixed(0)} µs, PostgreSQL ${b.postgresUsPerTurn.toFixed(0)} µs`;

for (const c of ['one', 'two'] as const) log(`  warm-up ${c}: ${show(await block(c))}`);
const blocks: Record<Contender, Block[]> = { one: [], two: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const c of round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const)) {
    const b = await block(c);
    blocks[c].push(b);
    log(`  round ${round + 1}/${ROUNDS} ${c === 'one' ? 'one node ' : 'two nodes'}: ${show(b)}`);
  }
}
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
for (const c of ['one', 'two'] as const) {
  const l = blocks[c].flatMap((b) => b.latenciesMs).sort((x, y) => x - y);
  log(
    `${c === 'one' ? 'one node ' : 'two nodes'}: ${Math.round(mean(blocks[c].map((b) => b.rps)))} turns/s, p50 ${percentile(l, 0.5).toFixed(1)} ms, p99 ${percentile(l, 0.99).toFixed(1)} ms; ` +
      `CPU per turn node-a ${mean(blocks[c].map((b) => b.cpuUsPerTurn[0])).toFixed(0)} µs, node-b ${mean(blocks[c].map((b) => b.cpuUsPerTurn[1])).toFixed(0)} µs, PostgreSQL ${mean(blocks[c].map((b) => b.postgresUsPerTurn)).toFixed(0)} µs`,
  );
}
const perRound = blocks.two.map((b, i) => b.rps / blocks.one[i].rps);
log(`two nodes / one node turns/s per round: ${perRound.map((r) => r.toFixed(2)).join(', ')}`);
for (const l of [...loads.one, ...loads.two]) l.close();
for (const sdk of sdks) await sdk.close();
for (const p of nodes) await p.kill('SIGTERM');
await server.close();
