// The data-file check before LMDB maps a file (src/store/lmdb/file-check.ts and reachable-pages.ts), on files
// lmdb-js really wrote, judged against LMDB itself where that is possible.
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { checkLmdbDataFile } from '../../src/store/lmdb/file-check.ts';
import { findMissingReachablePage } from '../../src/store/lmdb/reachable-pages.ts';
import { StoreOpenError } from '../../src/store/errors.ts';
import { currentLmdbMeta, LMDB_PAGE, lmdbPagesInUse, wholeLength } from '../support/lmdb-meta.ts';
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

/** Overwrites `count` pages from page `first` with `fill`. */
function overwritePages(file: string, first: number, count: number, fill = 0x5a): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(count * PAGE, fill), 0, count * PAGE, first * PAGE);
  closeSync(fd);
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

describe('pages in use are checked whatever the size of the file', () => {
  it('a whole-length file with one page in use overwritten in the middle is refused, naming the page', async () => {
    const { dir } = await writtenStore();
    const file = join(dir, 'data.mdb');
    wholeLength(file); // not short: the check before issue 34 did not walk such a file
    const filePages = statSync(file).size / PAGE;
    expect(BigInt(filePages)).toBeGreaterThanOrEqual(currentLmdbMeta(file).lastPage + 1n);
    const inUse = lmdbPagesInUse(file).tree;
    const middle = inUse.find((p) => p >= filePages / 3 && p <= (2 * filePages) / 3)!;
    expect(middle).toBeDefined();
    overwritePages(file, middle, 1);
    expect(() => checkLmdbDataFile(dir)).toThrow(
      new RegExp(`data\\.mdb is damaged \\(header page \\d: page ${middle}, in use, does not carry its own page number: it was overwritten\\): restore`),
    );
    // LMDB itself cannot read that store (it fails, or dies of a signal, depending on what the page holds).
    expect(lmdbReadsEverything(dir)).not.toEqual({ signal: null, status: 0, records: 1750 });
  });

  it('a page in use whose header keeps its number but whose nodes point outside the page is refused', async () => {
    const { dir } = await writtenStore();
    const file = join(dir, 'data.mdb');
    const page = lmdbPagesInUse(file).tree[0];
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from([0xf0, 0xff]), 0, 2, page * PAGE + 24); // the first node's offset
    closeSync(fd);
    expect(() => checkLmdbDataFile(dir)).toThrow(new RegExp(`page ${page}, in use: a node at byte \\d+ lies outside the page's nodes`));
  });

  it('a leaf in use whose header and node offsets are whole but whose data size runs past the page is refused (LMDB dies of SIGSEGV on it)', async () => {
    const { dir } = await writtenStore();
    const file = join(dir, 'data.mdb');
    const buf = readFileSync(file);
    // A leaf page (not LEAF2) in use, and its first node holding plain data (no overflow, no sub-DB).
    const leaf = lmdbPagesInUse(file).tree.find((p) => (buf.readUInt16LE(p * PAGE + 18) & 0x22) === 0x02)!;
    const node = PAGE * leaf + 24 + buf.readUInt16LE(PAGE * leaf + 24);
    expect(buf.readUInt16LE(node + 4)).toBe(0);
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from([0xff, 0xff]), 0, 2, node + 2); // the data size's high half
    closeSync(fd);
    expect(() => checkLmdbDataFile(dir)).toThrow(new RegExp(`page ${leaf}, in use: the data of the node at byte \\d+ runs past the page`));
    // What LMDB itself does with that store: it reads the value past its page and dies of a signal (SIGSEGV here).
    expect(['SIGSEGV', 'SIGBUS']).toContain(lmdbReadsEverything(dir).signal);
  });

  it('free pages may hold anything: every free page overwritten, the check passes and LMDB reads and writes everything', async () => {
    const { dir } = await writtenStore();
    const file = join(dir, 'data.mdb');
    const meta = currentLmdbMeta(file);
    const fd = openSync(file, 'r');
    const stats = findMissingReachablePage({
      fd,
      pageSize: PAGE,
      filePages: BigInt(statSync(file).size / PAGE),
      lastPage: meta.lastPage,
      roots: [meta.freeRoot, meta.mainRoot],
    });
    closeSync(fd);
    expect(stats.ok).toBe(true);
    // Pages of no tree and no overflow value: the free ones. Overwriting them hides nothing LMDB needs.
    const inUse = lmdbPagesInUse(file);
    const used = new Set(inUse.tree);
    const overflowRuns = inUse.overflow;
    const free = [];
    for (let p = 2; p <= Number(meta.lastPage); p++) if (!used.has(p) && !overflowRuns.has(p)) free.push(p);
    expect(free.length).toBeGreaterThan(0);
    for (const p of free) overwritePages(file, p, 1);
    expect(() => checkLmdbDataFile(dir)).not.toThrow();
    expect(lmdbReadsEverything(dir)).toEqual({ signal: null, status: 0, records: 1750 });
  });

  it('a damaged second header page is refused even when the first is whole (LMDB would follow the one with the higher transaction id)', async () => {
    const { dir } = await writtenStore();
    overwritePages(join(dir, 'data.mdb'), 1, 1);
    expect(() => checkLmdbDataFile(dir)).toThrow(/is not a readable LMDB data file \(header page 1: its header does not carry its own page number\): restore/);
  });

  it('a damaged flushed meta (the second half of page 0) is refused', async () => {
    const { dir } = await writtenStore();
    const file = join(dir, 'data.mdb');
    const fd = openSync(file, 'r+');
    const root = Buffer.alloc(8);
    root.writeBigUInt64LE(1n << 40n);
    writeSync(fd, root, 0, 8, PAGE / 2 + 136); // its main DB's root
    closeSync(fd);
    expect(() => checkLmdbDataFile(dir)).toThrow(/the flushed meta in header page 0: its root page 1099511627776 is outside 2…\d+/);
  });

  it('an empty data.mdb: refused next to the files of an earlier run (lock.mdb, service-secret), accepted in a new directory', async () => {
    const { dir } = await writtenStore();
    truncateSync(join(dir, 'data.mdb'), 0);
    expect(() => checkLmdbDataFile(dir)).toThrow(
      /data\.mdb is empty \(0 bytes\), but .* holds files of an earlier run \(lock\.mdb\): the store's data is gone\. Restore the directory from a backup, or move it away/,
    );
    const fresh = tempDir();
    writeFileSync(join(fresh, 'data.mdb'), '');
    expect(() => checkLmdbDataFile(fresh)).not.toThrow();
    writeFileSync(join(fresh, 'service-secret'), 'a-generated-secret');
    expect(() => checkLmdbDataFile(fresh)).toThrow(/holds files of an earlier run \(service-secret\)/);
  });
});
