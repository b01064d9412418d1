// SDK invoke across nodes (issue 17, part 4): node A (this process) calls a function whose SDK is connected to node B
// (a child process) — request and answer go over PostgreSQL's NOTIFY — against the same invoke of a function whose SDK
// is connected to A itself, measured in one run in alternating blocks. Both SDK clients live in this process, the same
// handler behind each. PostgreSQL is the bench's own (fsync on), whatever BENCH_ENGINE says: several nodes need it.
// Run: npx tsx bench/cluster-invoke.ts   (target: cross-node p50 ≤ 2 × one node's p50 + 1 ms)
//   N (default 3000 per path), WARMUP (default 500), BLOCK (default 250)
import { z } from 'zod';
import { createClient, type ParleyClient } from '../sdk/src/index.ts';
import { spawnParley, startParley, TEST_SECRET, tempDir } from '../test/support/parley.ts';
import { benchPostgres, log, percentile } from './lib.ts';

const N = Number(process.env.N ?? 3000);
const WARMUP = Number(process.env.WARMUP ?? 500);
const BLOCK = Number(process.env.BLOCK ?? 250);
const CTX = { customerId: 'cus_1', channel: 'web' as const, conversationId: 'conv_1' };
const ARGS = { orderId: 'A-1001' };
const DATA = { orderId: 'A-1001', status: 'shipped', items: 3 };

const summary = (samples: number[]) => {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 0.5), p99: percentile(s, 0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
};
const fmt = (ms: number) => `${ms.toFixed(3)} ms`;

async function sdk(url: string, name: string): Promise<ParleyClient> {
  const c = createClient().expose(name, { parameters: z.object({ orderId: z.string() }) }, () => DATA);
  await c.listen({ url, secret: TEST_SECRET });
  return c;
}

const server = await benchPostgres();
try {
  const url = await server.createDatabase();
  const cluster = (nodeId: string) => ({ storage: { engine: 'postgres' as const, url }, cluster: { node_id: nodeId, lease_seconds: 5 } });
  const a = await startParley({ config: { ...cluster('bench-a'), logging: { level: 'warn' } } });
  const b = await spawnParley({ storagePath: tempDir('parley-bench-b-'), config: cluster('bench-b') });
  const onA = await sdk(a.url(), 'lookup_here');
  const onB = await sdk(b.url, 'lookup_there');
  const deadline = Date.now() + 10_000;
  while (!a.runtime.clusterHub.catalog().some((f) => f.name === 'lookup_there')) {
    if (Date.now() > deadline) throw new Error("node A never listed node B's function");
    await new Promise((r) => setTimeout(r, 20));
  }

  let i = 0;
  const once = async (name: string) => {
    const r = await a.runtime.clusterHub.invoke(name, ARGS, CTX, { invocationId: `i${i++}` });
    if (!r.ok) throw new Error(`invoke ${name} failed: ${JSON.stringify(r)}`);
  };
  const paths = { local: 'lookup_here', cross: 'lookup_there' } as const;
  for (let w = 0; w < WARMUP; w++) {
    await once(paths.local);
    await once(paths.cross);
  }
  const samples = { local: [] as number[], cross: [] as number[] };
  for (let done = 0, round = 0; done < N; done += BLOCK, round++) {
    // ABBA: neither path always goes first.
    const order = round % 2 === 0 ? (['local', 'cross'] as const) : (['cross', 'local'] as const);
    for (const path of order) {
      for (let k = 0; k < BLOCK; k++) {
        const t = performance.now();
        await once(paths[path]);
        samples[path].push(performance.now() - t);
      }
    }
  }
  await onA.close();
  await onB.close();
  await a.close();
  await b.kill('SIGTERM');

  const l = summary(samples.local);
  const c = summary(samples.cross);
  log(`N=${N} sequential invokes per path after ${WARMUP} warm-up each, alternating blocks of ${BLOCK}; node B a child process; PostgreSQL ${server.url}`);
  log(`one node   (SDK on A)         : p50 ${fmt(l.p50)}  p99 ${fmt(l.p99)}  mean ${fmt(l.mean)}`);
  log(`cross-node (SDK on B, via PG) : p50 ${fmt(c.p50)}  p99 ${fmt(c.p99)}  mean ${fmt(c.mean)}`);
  const ratio = c.p50 / l.p50;
  const within = c.p50 <= 2 * l.p50 + 1;
  log(
    `cross-node invoke p50 ratio = ${ratio.toFixed(2)} (p99 ratio ${(c.p99 / l.p99).toFixed(2)}; target p50 ≤ 2× + 1 ms = ${fmt(2 * l.p50 + 1)}) ${within ? 'OK' : 'OVER TARGET'}`,
  );
} finally {
  await server.close();
}
