// The cost of telemetry on turns: two Parley processes, telemetry persisted and
// not (metrics computed in both), the same closed-loop widget load from this
// process (offline LLM, one SDK call per turn), alternating blocks. Each server
// has its own process (and heap), so one's GC pauses don't land in the other's.
// Two figures: throughput (turns/s, sensitive to anything else on the machine)
// and each server's own CPU time per turn (from /proc, all its threads — the
// steadier one on a shared machine).
//   npx tsx bench/telemetry-cost.ts
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { createClient } from '../sdk/src/index.ts';
import { spawnParley, TEST_SECRET, tempDir } from '../test/support/parley.ts';
import { alternate, log, percentile, type LoadResult } from './lib.ts';
import { clients } from './widget-load.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 200);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CLOCK_TICKS_PER_SECOND = 100; // Linux USER_HZ

/** CPU time (ms, user + system, every thread) the process has used so far. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

async function instance(telemetry: boolean) {
  const p = await spawnParley({ storagePath: tempDir('parley-telemetry-'), config: { telemetry: { enabled: telemetry }, channels: { web: { rate_limit_per_minute: 1_000_000 } } } });
  const sdk = createClient();
  sdk.expose('getOrderStatus', { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) }, async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }));
  await sdk.listen({ url: p.url, secret: TEST_SECRET });
  const load = await clients(CONNECTIONS, `${p.url.replace('http', 'ws')}/widget/ws`, (i) => JSON.stringify({ type: 'init', customerId: `t-${i}`, email: `t${i}@example.com` }), (f) => f.type === 'message');
  const cpu = { ms: 0, turns: 0 };
  const blocks: { rps: number; cpuMsPerTurn: number }[] = [];
  const block = async () => {
    const before = cpuMs(p.child.pid!);
    const r = await load.block(BLOCK_MS);
    const used = cpuMs(p.child.pid!) - before;
    cpu.ms += used;
    cpu.turns += r.requests;
    blocks.push({ rps: r.rps, cpuMsPerTurn: used / r.requests });
    return r;
  };
  return { p, sdk, load, cpu, block, blocks };
}

const on = await instance(true);
const off = await instance(false);
log(`telemetry cost: ${CONNECTIONS} connections per instance, ${ROUNDS} rounds × ${BLOCK_MS} ms`);
const r = await alternate(ROUNDS, { telemetryOn: on.block, telemetryOff: off.block });
const show = (x: LoadResult, cpu: { ms: number; turns: number }) => {
  const l = [...x.latenciesMs].sort((a, b) => a - b);
  return { turnsPerSecond: Math.round(x.rps), p50: +percentile(l, 0.5).toFixed(1), p99: +percentile(l, 0.99).toFixed(1), serverCpuMsPerTurn: +(cpu.ms / cpu.turns).toFixed(3) };
};
const a = show(r.telemetryOn, on.cpu);
const b = show(r.telemetryOff, off.cpu);
log(`telemetry on : ${JSON.stringify(a)}`);
log(`telemetry off: ${JSON.stringify(b)}`);
log(`throughput cost = ${((100 * (b.turnsPerSecond - a.turnsPerSecond)) / b.turnsPerSecond).toFixed(1)}%; server CPU per turn cost = ${((100 * (a.serverCpuMsPerTurn - b.serverCpuMsPerTurn)) / b.serverCpuMsPerTurn).toFixed(1)}% (target ≤ 5%)`);
// Each round's on and off blocks ran back to back: the median of the per-round costs shrugs off a
// round that something else on the machine disturbed.
const median = (xs: number[]) => [...xs].sort((m, n) => m - n)[xs.length >> 1];
const perRound = on.blocks.map((b, i) => ({ throughput: (100 * (off.blocks[i].rps - b.rps)) / off.blocks[i].rps, cpu: (100 * (b.cpuMsPerTurn - off.blocks[i].cpuMsPerTurn)) / off.blocks[i].cpuMsPerTurn }));
log(`per round: throughput cost ${perRound.map((x) => `${x.throughput.toFixed(1)}%`).join(', ')}; CPU cost ${perRound.map((x) => `${x.cpu.toFixed(1)}%`).join(', ')}`);
log(`median of rounds: throughput cost = ${median(perRound.map((x) => x.throughput)).toFixed(1)}%; CPU per turn cost = ${median(perRound.map((x) => x.cpu)).toFixed(1)}% (target ≤ 5%)`);
for (const x of [on, off]) {
  x.load.close();
  await x.sdk.close();
  await x.p.kill('SIGTERM');
}
process.exit(0);
