// Walks the B-trees of an LMDB data file with plain reads (never the map, so a missing page cannot raise SIGBUS)
// and finds the first page that a reader or writer would touch but the file does not hold.
//
// Layout of lmdb-js's LMDB, from its mdb.c: a 24-byte page header (page number, txn id, pad, flags at 18, lower
// bound at 20, upper bound at 22; an overflow page keeps its page count at 20). Node offsets follow the header
// as uint16s, relative to the end of the header; there are lower/2 of them. A node is lo, hi, flags, key size
// (uint16 each), then the key, then the data. A branch node's child is lo | hi << 16 | flags << 32. A leaf
// node's data size is lo | hi << 16; with F_BIGDATA its data is the first overflow page's number, with
// F_SUBDATA it is a DB record whose root page sits at byte 40.
import { readSync } from 'node:fs';

const HEADER = 24;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_LEAF2 = 0x20;
const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
/** The root page number of an empty DB. */
export const EMPTY_ROOT = 0xffffffffffffffffn;
const DB_ROOT_OFFSET = 40;

export interface PageWalkInput {
  fd: number;
  pageSize: number;
  /** Pages the file holds in full. */
  filePages: bigint;
  /** The meta's last page number: nothing reachable lies beyond it. */
  lastPage: bigint;
  roots: bigint[];
}

/** `visited`: the pages reached, overflow pages included (what the DB records count as branch, leaf and overflow). */
export type PageWalkResult = { ok: true; visited: bigint } | { ok: false; missing: bigint } | { ok: false; damaged: string };

/** Every page reachable from `roots` (sub-databases and overflow pages included) must be inside the file. */
export function findMissingReachablePage(input: PageWalkInput): PageWalkResult {
  const { fd, pageSize, filePages, lastPage } = input;
  const seen = new Set<bigint>();
  let overflowCount = 0n;
  const pending = input.roots.filter((r) => r !== EMPTY_ROOT);
  const page = Buffer.alloc(pageSize);
  const overflow = Buffer.alloc(HEADER);
  const inRange = (p: bigint) => p >= 2n && p <= lastPage;
  while (pending.length > 0) {
    const pgno = pending.pop()!;
    if (!inRange(pgno)) return { ok: false, damaged: `page ${pgno} is referenced but outside 2…${lastPage}` };
    if (seen.has(pgno)) continue;
    seen.add(pgno);
    if (pgno >= filePages) return { ok: false, missing: pgno };
    readSync(fd, page, 0, pageSize, Number(pgno) * pageSize);
    const flags = page.readUInt16LE(18);
    if (flags & P_LEAF2) continue;
    if (!(flags & (P_BRANCH | P_LEAF))) return { ok: false, damaged: `page ${pgno} is neither a branch nor a leaf` };
    const count = page.readUInt16LE(20) >> 1;
    for (let i = 0; i < count; i++) {
      const at = HEADER + page.readUInt16LE(HEADER + 2 * i);
      if (at + 8 > pageSize) return { ok: false, damaged: `page ${pgno} has a node outside the page` };
      const lo = BigInt(page.readUInt16LE(at));
      const hi = BigInt(page.readUInt16LE(at + 2));
      const nodeFlags = page.readUInt16LE(at + 4);
      const data = at + 8 + page.readUInt16LE(at + 6);
      if (flags & P_BRANCH) {
        pending.push(lo | (hi << 16n) | (BigInt(nodeFlags) << 32n));
      } else if (nodeFlags & F_BIGDATA) {
        if (data + 8 > pageSize) return { ok: false, damaged: `page ${pgno} has a node outside the page` };
        const first = page.readBigUInt64LE(data);
        if (!inRange(first)) return { ok: false, damaged: `page ${pgno} points at overflow page ${first}` };
        if (first >= filePages) return { ok: false, missing: first };
        readSync(fd, overflow, 0, HEADER, Number(first) * pageSize);
        if (!(overflow.readUInt16LE(18) & P_OVERFLOW)) return { ok: false, damaged: `page ${first} is not an overflow page` };
        const last = first + BigInt(overflow.readUInt32LE(20)) - 1n;
        if (last > lastPage) return { ok: false, damaged: `overflow pages ${first}…${last} pass ${lastPage}` };
        if (last >= filePages) return { ok: false, missing: filePages };
        overflowCount += last - first + 1n;
      } else if (nodeFlags & F_SUBDATA) {
        if (data + DB_ROOT_OFFSET + 8 > pageSize) return { ok: false, damaged: `page ${pgno} has a node outside the page` };
        const root = page.readBigUInt64LE(data + DB_ROOT_OFFSET);
        if (root !== EMPTY_ROOT) pending.push(root);
      }
    }
  }
  return { ok: true, visited: BigInt(seen.size) + overflowCount };
}
