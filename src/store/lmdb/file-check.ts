// Checks LMDB's data file before lmdb-js maps it. LMDB trusts its file: a truncated file is mapped anyway and the
// first read past its end kills the process with SIGBUS; overwritten meta pages can crash it with SIGSEGV. Both
// print nothing useful. Reading the two meta pages first turns them into one clear line.
//
// Layout of lmdb-js's LMDB (data version 2), read off real files: a 24-byte page header, then the meta: magic
// 0xBEEFC0DE at 24, version at 28, the map size at 40, the free DB's record from 48 (its first field holds the
// page size), the main DB's record from 96, the last page number at 144 and the transaction id at 152. Each DB
// record ends with its root page (free DB's at 88, main DB's at 136; all ones when the DB is empty).
//
// The newer of the two valid metas is the current one. A file that holds every page up to its last page number is
// whole. One that ends earlier is not necessarily damaged: LMDB does not write the pages a transaction allocated
// and freed again ("loose" pages go to the free list unwritten), so a file a crash left behind can end a page or
// more early (seen after a SIGKILL here). Then every page reachable from the two roots is looked up
// (reachable-pages.ts): if all are inside the file, the missing tail is free space and the store opens.
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { StoreOpenError } from '../errors.ts';
import { EMPTY_ROOT, findMissingReachablePage } from './reachable-pages.ts';

const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const HEADER = 24;

interface Meta {
  pageSize: number;
  /** The free DB's and the main DB's root pages (those that are not empty). */
  roots: bigint[];
  lastPage: bigint;
  txnId: bigint;
}

function readMeta(buf: Buffer): Meta | undefined {
  if (buf.length < HEADER + 136) return undefined;
  if (buf.readUInt32LE(HEADER) !== MAGIC || buf.readUInt32LE(HEADER + 4) !== DATA_VERSION) return undefined;
  const pageSize = buf.readUInt32LE(HEADER + 24);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  const lastPage = buf.readBigUInt64LE(HEADER + 120);
  const roots = [buf.readBigUInt64LE(HEADER + 64), buf.readBigUInt64LE(HEADER + 112)].filter((p) => p !== EMPTY_ROOT);
  if (roots.some((p) => p > lastPage)) return undefined;
  return { pageSize, roots, lastPage, txnId: buf.readBigUInt64LE(HEADER + 128) };
}

const restore = 'restore the directory from a backup (or move it away to start empty)';

/** Throws StoreOpenError with one line naming the file and what is wrong; a missing file (a new store) is fine. */
export function checkLmdbDataFile(dir: string): void {
  const file = join(dir, 'data.mdb');
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return; // created but never written: LMDB initialises it
    const first = Buffer.alloc(4096);
    readSync(fd, first, 0, first.length, 0);
    const meta0 = readMeta(first);
    const pageSize = meta0?.pageSize ?? 4096;
    if (size < 2 * pageSize) throw new StoreOpenError(`${file} is truncated (${size} bytes, less than its two header pages): ${restore}`);
    const second = Buffer.alloc(pageSize);
    readSync(fd, second, 0, pageSize, pageSize);
    const meta1 = readMeta(second);
    const metas = [meta0, meta1].filter((m): m is Meta => m !== undefined);
    if (metas.length === 0) throw new StoreOpenError(`${file} is not a readable LMDB data file (both header pages are damaged or overwritten): ${restore}`);
    const current = metas.reduce((a, b) => (b.txnId > a.txnId ? b : a));
    const page = BigInt(current.pageSize);
    if (BigInt(size) >= (current.lastPage + 1n) * page) return;
    const walk = findMissingReachablePage({ fd, pageSize: current.pageSize, filePages: BigInt(size) / page, lastPage: current.lastPage, roots: current.roots });
    if ('missing' in walk) {
      throw new StoreOpenError(`${file} is truncated (${size} bytes; page ${walk.missing}, in use, ends at byte ${(walk.missing + 1n) * page}): ${restore}`);
    }
    if ('damaged' in walk) throw new StoreOpenError(`${file} is damaged (${walk.damaged}): ${restore}`);
  } finally {
    closeSync(fd);
  }
}
