// Checks LMDB's data file before lmdb-js maps it. LMDB trusts its file: a truncated file is mapped anyway and the
// first read past its end kills the process with SIGBUS; overwritten meta pages can crash it with SIGSEGV. Both
// print nothing useful. Reading the two meta pages first turns them into one clear line.
//
// Layout of lmdb-js's LMDB (data version 2), read off real files: a 24-byte page header, then the meta: magic
// 0xBEEFC0DE at 24, version at 28, the map size at 40, the free DB's record from 48 (its first field holds the
// page size), the main DB's record from 96, the last page number at 144 and the transaction id at 152. Each DB
// record ends with its root page (free DB's at 88, main DB's at 136; all ones when the DB is empty).
//
// The newer of the two valid metas is the current one, and both of its roots must be inside the file: they are
// the first pages an open reads. Not every page up to the last page number: LMDB does not write the pages a
// transaction allocated and freed again ("loose" pages go to the free list unwritten), so a file that a crash
// left behind can legitimately end a page or more before that number (seen after a SIGKILL here).
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { StoreOpenError } from '../errors.ts';

const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const HEADER = 24;

interface Meta {
  pageSize: number;
  /** The free DB's and the main DB's root pages (those that are not empty). */
  roots: bigint[];
  txnId: bigint;
}

const EMPTY = 0xffffffffffffffffn;

function readMeta(buf: Buffer): Meta | undefined {
  if (buf.length < HEADER + 136) return undefined;
  if (buf.readUInt32LE(HEADER) !== MAGIC || buf.readUInt32LE(HEADER + 4) !== DATA_VERSION) return undefined;
  const pageSize = buf.readUInt32LE(HEADER + 24);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  const lastPage = buf.readBigUInt64LE(HEADER + 120);
  const roots = [buf.readBigUInt64LE(HEADER + 64), buf.readBigUInt64LE(HEADER + 112)].filter((p) => p !== EMPTY);
  if (roots.some((p) => p > lastPage)) return undefined;
  return { pageSize, roots, txnId: buf.readBigUInt64LE(HEADER + 128) };
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
    const lastRoot = current.roots.reduce((a, b) => (b > a ? b : a), 1n);
    const needed = (lastRoot + 1n) * BigInt(current.pageSize);
    if (BigInt(size) < needed) {
      throw new StoreOpenError(`${file} is truncated (${size} bytes; its root page ends at byte ${needed}): ${restore}`);
    }
  } finally {
    closeSync(fd);
  }
}
