// The current meta page of an LMDB data file (the one with the higher transaction id), read at the offsets
// src/store/lmdb/file-check.ts documents: tests that cut or alter a store's file aim with it.
import { closeSync, openSync, readFileSync, readSync, statSync, truncateSync } from 'node:fs';

export const LMDB_PAGE = 4096;

export function currentLmdbMeta(file: string) {
  const fd = openSync(file, 'r');
  const metas = [0, 1].map((n) => {
    const b = Buffer.alloc(LMDB_PAGE);
    readSync(fd, b, 0, LMDB_PAGE, n * LMDB_PAGE);
    return { page: n, freeRoot: b.readBigUInt64LE(88), mainRoot: b.readBigUInt64LE(136), lastPage: b.readBigUInt64LE(144), txnId: b.readBigUInt64LE(152) };
  });
  closeSync(fd);
  return metas.reduce((a, b) => (b.txnId > a.txnId ? b : a));
}

/**
 * The pages of the trees of every meta (pages 0 and 1, and the flushed meta lmdb-js keeps in the second half of page
 * 0: LMDB may open any of them), walked in memory off the whole file (tests that overwrite pages in use, or
 * only free ones, aim with it; independent of src/store/lmdb's walk): `tree` the branch and leaf pages, sub-databases
 * included, `overflow` every page of the overflow values they point at.
 */
export function lmdbPagesInUse(file: string): { tree: number[]; overflow: Set<number> } {
  const buf = readFileSync(file);
  const found = new Set<number>();
  const overflow = new Set<number>();
  const pending = [0, LMDB_PAGE / 2, LMDB_PAGE]
    .filter((at) => buf.readBigUInt64LE(at + 152) !== 0n)
    .flatMap((at) => [buf.readBigUInt64LE(at + 88), buf.readBigUInt64LE(at + 136)])
    .filter((r) => r !== 0xffffffffffffffffn)
    .map(Number);
  while (pending.length > 0) {
    const pgno = pending.pop()!;
    if (found.has(pgno)) continue;
    found.add(pgno);
    const page = buf.subarray(pgno * LMDB_PAGE, (pgno + 1) * LMDB_PAGE);
    const flags = page.readUInt16LE(18);
    if (flags & 0x20) continue; // LEAF2: keys only, no nodes
    for (let i = 0; i < page.readUInt16LE(20) >> 1; i++) {
      const at = 24 + page.readUInt16LE(24 + 2 * i);
      const [lo, hi, nodeFlags, keySize] = [0, 2, 4, 6].map((o) => page.readUInt16LE(at + o));
      const data = at + 8 + keySize;
      if (flags & 0x01) pending.push(lo + hi * 0x10000 + nodeFlags * 0x100000000);
      else if (nodeFlags & 0x01) {
        const first = Number(page.readBigUInt64LE(data));
        const count = buf.readUInt32LE(first * LMDB_PAGE + 20);
        for (let p = first; p < first + count; p++) overflow.add(p);
      } else if (nodeFlags & 0x02) {
        const root = page.readBigUInt64LE(data + 40);
        if (root !== 0xffffffffffffffffn) pending.push(Number(root));
      }
    }
  }
  return { tree: [...found].sort((a, b) => a - b), overflow };
}

/** Pads a data file LMDB left shorter than its last page (free pages it never wrote) with zeros up to that page. */
export function wholeLength(file: string): void {
  const whole = Number(currentLmdbMeta(file).lastPage + 1n) * LMDB_PAGE;
  if (statSync(file).size < whole) truncateSync(file, whole);
}
