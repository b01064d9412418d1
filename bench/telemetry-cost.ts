// The cost of telemetry on turns: one Parley process, the same closed-loop widget
// load from this process (offline LLM, one SDK call per turn), in alternating
// blocks with telemetry persisted and not (listeners and metrics run in both).
// Persistence is switched between blocks through the test-mode route, so both
// sides share one process, heap and JIT: two processes differed by up to 4% with
// telemetry off in both (an A/A run), more than the effect being measured.
// Two figures: throughput (turns/s) and the server's own CPU time per turn (from
// /proc, every thread), for the whole run and as the median of the per-round costs.
//   npx tsx bench/telemetry-cost.ts          (BENCH_AA=1: off against off, the method's own noise)
//   BENCH_ENGINE=postgres npx tsx bench/telemetry-cost.ts   (telemetry in PostgreSQL's tables, on a server of the
//   bench's own, fsync on; the CPU figures then add the database server's CPU per turn, all its processes)
import { spawnParley, tempDir } from '../test/support/parley.ts';
import { parleyStorage, log, onEngine, percentile, postgresCpuMs, processCpuMs, startBenchPostgres } from './lib.ts';
import { ratioLine, spread } from './rounds.ts';
import { clients } from './widget-load.ts';
import { orderStatusBackend } from './order-backend.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 200);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20); // ≥ 10 paired rounds for a judged figure (issue 22)
const AA = process.env.BENCH_AA === '1';
const postgres = await startBenchPostgres();
const p = await spawnParley({
  storagePath: tempDir('parley-telemetry-'),
  config: { storage: await parleyStorage(postgres), telemetry: { enabled: true }, channels: { web: { rate_limit_per_minute: 1_000_000 } } },
});
/** CPU time (ms) the server has used so far: Parley's process, and on PostgreSQL the database server's processes too. */
const cpuMs = () => processCpuMs(p.child.pid!) + (postgres ? postgresCpuMs(postgres) : 0);
const sdk = await orderStatusBackend(p.url);
const load = await clients(
  CONNECTIONS,
  `${p.url.replace('http', 'ws')}/widget/ws`,
  (i) => JSON.stringify({ type: 'init', customerId: `t-${i}`, email: `t${i}@example.com` }),
  (f) => f.type === 'message',
);

const persist = async (on: boolean) => {
  const res = await fetch(`${p.url}/__test__/telemetry`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ persist: AA ? false : on }),
  });
  if (!res.ok) throw new Error(`switching telemetry: ${res.status} ${await res.text()}`);
  await new Promise((resolve) => setTimeout(resolve, 300)); // the previous block's last flush
};

interface Block {
  rps: number;
  cpuUsPerTurn: number;
  latenciesMs: number[];
}
const block = async (): Promise<Block> => {
  const before = cpuMs();
  const r = await load.block(BLOCK_MS);
  return { rps: r.rps, cpuUsPerTurn: ((cpuMs() - before) * 1000) / r.requests, latenciesMs: r.latenciesMs };
};

log(
  `telemetry cost${onEngine()}: one process, ${CONNECTIONS} connections, ${ROUNDS} rounds × 2 blocks × ${BLOCK_MS} ms${AA ? ' — A/A: telemetry off in both' : ''}`,
);
await persist(true);
await block(); // warm-up
const on: Block[] = [];
const off: Block[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const persisted of round % 2 === 0 ? [true, false] : [false, true]) {
    await persist(persisted);
    const b = await block();
    (persisted ? on : off).push(b);
    log(`  round ${round + 1}/${ROUNDS} ${persisted ? 'on ' : 'off'}: ${Math.round(b.rps)} turns/s, ${b.cpuUsPerTurn.toFixed(0)} µs CPU/turn`);
  }
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const show = (blocks: Block[]) => {
  const l = blocks.flatMap((b) => b.latenciesMs).sort((a, b) => a - b);
  return {
    turnsPerSecond: Math.round(mean(blocks.map((b) => b.rps))),
    p50: +percentile(l, 0.5).toFixed(1),
    p99: +percentile(l, 0.99).toFixed(1),
    serverCpuUsPerTurn: +mean(blocks.map((b) => b.cpuUsPerTurn)).toFixed(1),
  };
};
const a = show(on);
const b = show(off);
log(`telemetry on : ${JSON.stringify(a)}`);
log(`telemetry off: ${JSON.stringify(b)}`);
// Each round's two blocks ran back to back: the median of the per-round costs shrugs off a round that something else disturbed.
const perRound = on.map((x, i) => ({
  throughput: (100 * (off[i].rps - x.rps)) / off[i].rps,
  cpu: (100 * (x.cpuUsPerTurn - off[i].cpuUsPerTurn)) / off[i].cpuUsPerTurn,
}));
log(`per round: throughput cost ${perRound.map((x) => `${x.throughput.toFixed(1)}%`).join(', ')}`);
log(
  `whole run: throughput cost ${((100 * (b.turnsPerSecond - a.turnsPerSecond)) / b.turnsPerSecond).toFixed(1)}%; ` +
    `server CPU per turn +${(a.serverCpuUsPerTurn - b.serverCpuUsPerTurn).toFixed(1)} µs = ${((100 * (a.serverCpuUsPerTurn - b.serverCpuUsPerTurn)) / b.serverCpuUsPerTurn).toFixed(1)}%`,
);
// The judged figures: the median of the per-round costs, in %, with their spread.
log(ratioLine('telemetry CPU cost %', spread(perRound.map((x) => x.cpu)), '(server CPU per turn, on vs off)', 1));
log(ratioLine('telemetry cost %', spread(perRound.map((x) => x.throughput)), '(throughput; target ≤ 5%)', 1));
load.close();
await sdk.close();
await p.kill('SIGTERM');
await postgres?.close();
process.exit(0);
