// The heap one idle widget socket costs Parley: Parley in this process (so its heap can be collected and read), the
// sockets opened by a child (idle-sockets-child.ts), `heapUsed` after a full GC with them open against before.
//   node --expose-gc --import tsx bench/idle-socket-heap.ts        (BENCH_IDLE, default 5000)
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { startParley } from '../test/support/parley.ts';
import { log } from './lib.ts';

const IDLE = Number(process.env.BENCH_IDLE ?? 5000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const p = await startParley({ config: { logging: { level: 'warn' }, channels: { web: { rate_limit_per_minute: 1_000_000 } } } });
const heap = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 100));
  }
  return process.memoryUsage().heapUsed;
};
const before = await heap();
// BENCH_HEAP_SNAPSHOT=<dir>: heap snapshots before and after (compare them in Chrome's DevTools, or count by constructor).
const snapshot = (name: string) => process.env.BENCH_HEAP_SNAPSHOT && writeHeapSnapshot(`${process.env.BENCH_HEAP_SNAPSHOT}/${name}.heapsnapshot`);
snapshot('before');
const child = fork(fileURLToPath(new URL('./idle-sockets-child.ts', import.meta.url)), [], {
  execArgv: ['--import', 'tsx'],
  env: { ...process.env, URL: `${p.url().replace('http', 'ws')}/widget/ws`, COUNT: String(IDLE), PREFIX: 'heap' },
});
await new Promise((r) => child.once('message', r));
const after = await heap();
snapshot('after');
log(`heap per idle widget socket = ${((after - before) / IDLE / 1024).toFixed(2)} KB (${IDLE} sockets, after a full GC)`);
await new Promise((r) => (child.once('message', r), child.send('close')));
await p.close();
process.exit(0);
