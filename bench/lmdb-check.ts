// How long the LMDB start-up check (src/store/lmdb/file-check.ts) takes on a large store: builds a data.mdb of
// BENCH_MB (default 1024) with lmdb-js in a temp dir (records of 200 B to 1 KiB, one in 16 of 6 KiB on overflow
// pages, in the main DB and two named DBs, with deletes so the free list is not empty), then times the check
// BENCH_RUNS times (default 3; the file is in the page cache, having just been written), and once more the disk's
// own sequential read of the file without the cache (dd iflag=direct), which bounds a check after a reboot.
//   npx tsx bench/lmdb-check.ts
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { checkLmdbDataFile } from '../src/store/lmdb/file-check.ts';
import { log } from './lib.ts';

const TARGET_MB = Number(process.env.BENCH_MB ?? 1024);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MB = 1024 * 1024;

async function build(dir: string): Promise<number> {
  const root = open({ path: dir, mapSize: 64 * MB, maxDbs: 32 });
  const dbs = [root, root.openDB({ name: 'history' }), root.openDB({ name: 'jobs' })];
  const small = Buffer.alloc(1024, 'x').toString();
  const big = Buffer.alloc(6 * 1024, 'y').toString();
  let n = 0;
  const file = join(dir, 'data.mdb');
  while (statSync(file).size < TARGET_MB * MB) {
    await root.transaction(() => {
      for (let i = 0; i < 20_000; i++, n++) {
        const value = n % 16 === 0 ? big : small.slice(0, 200 + (n % 824));
        void dbs[n % 3].put(`k${String(n).padStart(10, '0')}`, value);
        if (n % 7 === 0 && n > 0) void dbs[(n - 7) % 3].remove(`k${String(n - 7).padStart(10, '0')}`);
      }
    });
  }
  await root.close();
  return n;
}

const dir = mkdtempSync(join(tmpdir(), 'bench-lmdb-check-'));
try {
  const started = performance.now();
  const records = await build(dir);
  const file = join(dir, 'data.mdb');
  const bytes = statSync(file).size;
  log(`built ${(bytes / MB).toFixed(0)} MiB (${bytes / 4096} pages, ${records} records written) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    checkLmdbDataFile(dir);
    times.push(performance.now() - t);
  }
  const best = Math.min(...times);
  log(`check (page cache warm): ${times.map((t) => `${(t / 1000).toFixed(2)} s`).join(', ')}; best ${((bytes / MB / best) * 1000).toFixed(0)} MiB/s`);
  const dd = spawnSync('dd', [`if=${file}`, 'of=/dev/null', 'bs=8M', 'iflag=direct'], { encoding: 'utf8' });
  const line = dd.stderr.trim().split('\n').pop() ?? '';
  log(`the disk's own sequential read, uncached (dd bs=8M iflag=direct): ${dd.status === 0 ? line : `not measured (${line})`}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
