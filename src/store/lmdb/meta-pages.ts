// The meta pages of an LMDB data file, read off real files of lmdb-js's LMDB (data version 2) and its mdb.c: a
// 24-byte page header (the page's own number at 0, flags at 18: P_META = 0x08), then the meta: magic 0xBEEFC0DE at
// 24, version at 28, the map size at 40, the free DB's record from 48 (its first field holds the page size), the
// main DB's record from 96, the last page number at 144 and the transaction id at 152. Each DB record ends with its
// root page (free DB's at 88, main DB's at 136; all ones when the DB is empty).
//
// lmdb-js opens with overlappingSync (and so MDB_PREVSNAPSHOT) on Linux: besides pages 0 and 1 it keeps a third
// meta, the last one flushed to disk, in the second half of page 0 (from the map size on; no magic, no flags), and
// at open it may pick the previous snapshot rather than the newest. LMDB checks only page 0's flags and magic; page
// 1 and the flushed meta are taken as they are, so a damaged one with a high transaction id would be followed.
// Every one of them is therefore judged, and each tree they point at is walked.
import { HEADER } from './page-scan.ts';
import { EMPTY_ROOT } from './reachable-pages.ts';

const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const P_META = 0x08;

export interface Meta {
  /** Where it was read: `header page 0`, `header page 1`, or `the flushed meta in header page 0`. */
  where: string;
  pageSize: number;
  /** The free DB's and the main DB's root pages (those that are not empty). */
  roots: bigint[];
  lastPage: bigint;
  txnId: bigint;
}

const validPageSize = (n: number) => n >= 512 && n <= 65536 && (n & (n - 1)) === 0;

/** The meta whose page header starts at `at` in `buf`; `page` is 0 or 1, or undefined for the flushed meta. */
function metaAt(buf: Buffer, at: number, page: 0 | 1 | undefined): Meta | string {
  if (buf.length < at + HEADER + 136) return 'it is cut short';
  if (page !== undefined) {
    if (buf.readBigUInt64LE(at) !== BigInt(page)) return 'its header does not carry its own page number';
    if (!(buf.readUInt16LE(at + 18) & P_META)) return 'it is not marked as a meta page';
    if (buf.readUInt32LE(at + HEADER) !== MAGIC) return 'it does not start with the LMDB magic number';
    if (buf.readUInt32LE(at + HEADER + 4) !== DATA_VERSION) return `its data version is ${buf.readUInt32LE(at + HEADER + 4)}, not ${DATA_VERSION}`;
  }
  const pageSize = buf.readUInt32LE(at + HEADER + 24);
  if (!validPageSize(pageSize)) return `its page size ${pageSize} is impossible`;
  const lastPage = buf.readBigUInt64LE(at + HEADER + 120);
  const roots = [buf.readBigUInt64LE(at + HEADER + 64), buf.readBigUInt64LE(at + HEADER + 112)].filter((p) => p !== EMPTY_ROOT);
  if (lastPage < 1n) return `its last page ${lastPage} is before the meta pages`;
  const stray = roots.find((p) => p < 2n || p > lastPage);
  if (stray !== undefined) return `its root page ${stray} is outside 2…${lastPage}`;
  const where = page === undefined ? 'the flushed meta in header page 0' : `header page ${page}`;
  return { where, pageSize, roots, lastPage, txnId: buf.readBigUInt64LE(at + HEADER + 128) };
}

/** The page size page 0 claims, when page 0 is readable (else LMDB's default, 4096, to find page 1). */
export function pageSizeOf(page0: Buffer): number {
  const claimed = page0.length >= HEADER + 28 ? page0.readUInt32LE(HEADER + 24) : 0;
  return validPageSize(claimed) ? claimed : 4096;
}

export type MetaRead = { metas: Meta[] } | { damaged: string[] };

/**
 * Judges both meta pages and the flushed meta (when one was written: its transaction id is not 0). `page0` holds
 * the first page, `page1` the second (each `pageSize` bytes).
 */
export function readMetas(page0: Buffer, page1: Buffer): MetaRead {
  const damaged: string[] = [];
  const metas: Meta[] = [];
  const judge = (m: Meta | string, where: string) => (typeof m === 'string' ? damaged.push(`${where}: ${m}`) : metas.push(m));
  judge(metaAt(page0, 0, 0), 'header page 0');
  judge(metaAt(page1, 0, 1), 'header page 1');
  const half = page0.length >> 1;
  if (page0.length >= half + HEADER + 136 && page0.readBigUInt64LE(half + HEADER + 128) !== 0n) {
    judge(metaAt(page0, half, undefined), 'the flushed meta in header page 0');
  }
  if (damaged.length > 0) return { damaged };
  const sizes = new Set(metas.map((m) => m.pageSize));
  if (sizes.size > 1) return { damaged: [`the meta pages disagree on the page size (${[...sizes].join(', ')})`] };
  return { metas };
}
