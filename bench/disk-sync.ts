// Context for the acknowledgement tails: how long this machine's disk takes to make a small append durable.
// 2 KB appends, each followed by fdatasync, paced at 1,000/s for 3 s, in the OS temp directory (where the benches'
// stores live). Prints p50 / p90 / p99 / max in ms.
//   npx tsx bench/disk-sync.ts
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { log, percentile } from './lib.ts';

const RATE = Number(process.env.BENCH_RATE ?? 1000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 3000);

const dir = mkdtempSync(join(tmpdir(), 'bench-disk-sync-'));
const fd = openSync(join(dir, 'appends'), 'w');
const block = Buffer.alloc(2048, 7);
const latencies: number[] = [];
const gapMs = 1000 / RATE;
const end = performance.now() + DURATION_MS;
for (let at = performance.now(); at < end; at += gapMs) {
  while (performance.now() < at); // paced, not bursting: the next append starts on its slot
  const started = performance.now();
  writeSync(fd, block, 0, block.length, latencies.length * block.length);
  fdatasyncSync(fd);
  latencies.push(performance.now() - started);
}
closeSync(fd);
rmSync(dir, { recursive: true, force: true });
latencies.sort((a, b) => a - b);
const ms = (q: number) => percentile(latencies, q).toFixed(2);
log(
  `fdatasync after a 2 KB append, ${latencies.length} at ${RATE}/s in ${tmpdir()}: p50 ${ms(0.5)}, p90 ${ms(0.9)}, p99 ${ms(0.99)}, max ${latencies[latencies.length - 1].toFixed(2)} ms`,
);
