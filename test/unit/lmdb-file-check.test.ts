// The data-file check before LMDB maps a file (src/store/lmdb/file-check.ts and reachable-pages.ts), on files
// lmdb-js really wrote, judged against LMDB itself where that is possible.
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { checkLmdbDataFile } from '../../src/store/lmdb/file-check.ts';
import { findMissingReachablePage } from '../../src/store/lmdb/reachable-pages.ts';
import { StoreOpenError } from '../../src/store/errors.ts';
import { currentLmdbMeta, LMDB_PAGE } from '../support/lmdb-meta.ts';
import { tempDir } from '../support/tmp.ts';

const PAGE = LMDB_PAGE;

interface TreeStats {
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  overflowPages: number;
}
const pagesOf = (s: TreeStats) => BigInt(s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages);

/** A store lmdb-js wrote and closed: records over many pages in the main DB, and a named DB with overflow values. */
async function writtenStore(): Promise<{ dir: string; pagesInUse: bigint }> {
  const dir = tempDir();
  const db = open({ path: dir });
  const sub = db.openDB({ name: 'sub' });
  for (let batch = 0; batch < 5; batch++) {
    await db.transaction(() => {
      for (let i = 0; i < 200; i++) {
        void db.put(`k${batch}-${i}`, 'x'.repeat(500));
        void sub.put(`s${batch}-${i}`, i % 20 === 0 ? 'y'.repeat(10_000) : 'z');
      }
      for (let i = 0; i < 50; i++) void db.remove(`k${batch}-${i * 3}`);
    });
  }
  const stats = db.getStats() as TreeStats & { root: TreeStats; free: TreeStats };
  const pagesInUse = pagesOf(stats.root) + pagesOf(stats.free) + pagesOf(sub.getStats() as TreeStats);
  await db.close();
  return { dir, pagesInUse };
}

/** Opens the store in a child and reads every record of both DBs, then writes one: how LMDB itself fares. */
function lmdbReadsEverything(dir: string) {
  const script = `
    import { open } from 'lmdb';
    const db = open({ path: ${JSON.stringify(dir)} });
    let n = 0;
    // The main DB also holds the named DB's record under 'sub': read only the k… keys there.
    for (const [d, range] of [[db, { start: 'k', end: 'l' }], [db.openDB('sub'), {}]]) for (const { value } of d.getRange(range)) n += value.length > 0 ? 1 : 0;
    await db.put('after-check', 'ok');
    await db.close();
    console.log(n);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  return { signal: r.signal, status: r.status, records: Number(r.stdout.trim()) };
}

/** Pretends the current meta's last page number lies `extra` pages beyond the file's end. */
function raiseLastPage(file: string, extra: bigint): void {
  const meta = currentLmdbMeta(file);
  const fd = openSync(file, 'r+');
  const last = Buffer.alloc(8);
  last.writeBigUInt64LE(BigInt(statSync(file).size / PAGE) - 1n + extra);
  writeSync(fd, last, 0, 8, meta.page * PAGE + 144);
  closeSync(fd);
}

describe('the LMDB data-file check', () => {
  it('walks exactly the pages LMDB counts as in use: both roots, a named DB, overflow pages', async () => {
    const { dir, pagesInUse } = await writtenStore();
    const file = join(dir, 'data.mdb');
    const meta = currentLmdbMeta(file);
    expect(meta.mainRoot).toBeGreaterThan(1n);
    expect(meta.mainRoot).toBeLessThanOrEqual(meta.lastPage);
    const fd = openSync(file, 'r');
    const walk = findMissingReachablePage({
      fd,
      pageSize: PAGE,
      filePages: BigInt(statSync(file).size / PAGE),
      lastPage: meta.lastPage,
      roots: [meta.freeRoot, meta.mainRoot],
    });
    closeSync(fd);
    expect(walk).toEqual({ ok: true, visited: pagesInUse });
    expect(() => checkLmdbDataFile(dir)).not.toThrow();
  });

  it('agrees with LMDB: a file cut through pages in use is refused (LMDB dies of SIGBUS on it), a whole one passes', async () => {
    const { dir } = await writtenStore();
    const file = join(dir, 'data.mdb');
    const cut = Math.floor(statSync(file).size / PAGE / 2) * PAGE;
    truncateSync(file, cut);
    expect(() => checkLmdbDataFile(dir)).toThrow(StoreOpenError);
    expect(() => checkLmdbDataFile(dir)).toThrow(
      /data\.mdb is truncated \(\d+ bytes; page \d+, in use, ends at byte \d+\): restore the directory from a backup/,
    );
    expect(lmdbReadsEverything(dir).signal).toBe('SIGBUS');
    // The same writes, uncut: the check passes and LMDB reads all of it.
    const whole = await writtenStore();
    expect(() => checkLmdbDataFile(whole.dir)).not.toThrow();
    expect(lmdbReadsEverything(whole.dir)).toEqual({ signal: null, status: 0, records: 1750 });
  });

  it('a file ending before its last page number with only free pages missing passes, and LMDB opens, reads and writes it', async () => {
    const { dir } = await writtenStore();
    const file = join(dir, 'data.mdb');
    // What a crash leaves when the transaction's last allocated pages were freed again and never written.
    raiseLastPage(file, 3n);
    expect(currentLmdbMeta(file).lastPage).toBeGreaterThan(BigInt(statSync(file).size / PAGE));
    expect(() => checkLmdbDataFile(dir)).not.toThrow();
    expect(lmdbReadsEverything(dir)).toEqual({ signal: null, status: 0, records: 1750 });
  });

  it('a file one page short of its highest page in use is refused, and LMDB dies of SIGBUS on it', async () => {
    const { dir } = await writtenStore();
    const file = join(dir, 'data.mdb');
    const meta = currentLmdbMeta(file);
    const fd = openSync(file, 'r');
    const lastInUse = (filePages: bigint) =>
      findMissingReachablePage({ fd, pageSize: PAGE, filePages, lastPage: meta.lastPage, roots: [meta.freeRoot, meta.mainRoot] });
    // Find the highest page in use by cutting from the end until the walk stops naming a missing page.
    let pages = BigInt(statSync(file).size / PAGE);
    while (lastInUse(pages - 1n).ok) pages -= 1n;
    const missing = lastInUse(pages - 1n);
    closeSync(fd);
    expect(missing).toEqual({ ok: false, missing: pages - 1n });
    truncateSync(file, Number(pages - 1n) * PAGE);
    expect(() => checkLmdbDataFile(dir)).toThrow(new RegExp(`page ${pages - 1n}, in use`));
    expect(lmdbReadsEverything(dir).signal).toBe('SIGBUS');
  });
});
