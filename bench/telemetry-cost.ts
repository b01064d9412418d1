// The cost of telemetry on turn throughput: two Parley processes, telemetry
// persisted and not, the same closed-loop widget load from this process
// (offline LLM, one SDK call per turn), alternating blocks. Each server has its
// own process (and heap), so one's GC pauses don't land in the other's blocks.
//   npx tsx bench/telemetry-cost.ts
import { z } from 'zod';
import { createClient } from '../sdk/src/index.ts';
import { spawnParley, TEST_SECRET, tempDir } from '../test/support/parley.ts';
import { alternate, log, percentile, type LoadResult } from './lib.ts';
import { clients } from './widget-load.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 200);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

async function instance(telemetry: boolean) {
  const p = await spawnParley({ storagePath: tempDir('parley-telemetry-'), config: { telemetry: { enabled: telemetry }, channels: { web: { rate_limit_per_minute: 1_000_000 } } } });
  const sdk = createClient();
  sdk.expose('getOrderStatus', { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) }, async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }));
  await sdk.listen({ url: p.url, secret: TEST_SECRET });
  const load = await clients(CONNECTIONS, `${p.url.replace('http', 'ws')}/widget/ws`, (i) => JSON.stringify({ type: 'init', customerId: `t-${i}`, email: `t${i}@example.com` }), (f) => f.type === 'message');
  return { p, sdk, load };
}

const on = await instance(true);
const off = await instance(false);
log(`telemetry cost: ${CONNECTIONS} connections per instance, ${ROUNDS} rounds × ${BLOCK_MS} ms`);
const r = await alternate(ROUNDS, { telemetryOn: () => on.load.block(BLOCK_MS), telemetryOff: () => off.load.block(BLOCK_MS) });
const show = (x: LoadResult) => {
  const l = [...x.latenciesMs].sort((a, b) => a - b);
  return { turnsPerSecond: Math.round(x.rps), p50: +percentile(l, 0.5).toFixed(1), p99: +percentile(l, 0.99).toFixed(1) };
};
const a = show(r.telemetryOn);
const b = show(r.telemetryOff);
log(`telemetry on : ${JSON.stringify(a)}`);
log(`telemetry off: ${JSON.stringify(b)}`);
log(`cost = ${((100 * (b.turnsPerSecond - a.turnsPerSecond)) / b.turnsPerSecond).toFixed(1)}% of throughput (target ≤ 5%)`);
for (const x of [on, off]) {
  x.load.close();
  await x.sdk.close();
  await x.p.kill('SIGTERM');
}
process.exit(0);
