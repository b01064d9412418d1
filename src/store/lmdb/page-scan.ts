// One sequential pass over an LMDB data file, in large chunks (plain reads, never the map, so a missing or damaged
// page cannot raise SIGBUS or SIGSEGV here): for every page, whether its header carries its own page number
// (LMDB's `mp_pgno`, the first 8 bytes of every page it writes) and its kind, and for the branch and leaf pages the
// pages they point at. reachable-pages.ts then walks the trees over this index, without reading the file again.
//
// Layout of lmdb-js's LMDB, from its mdb.c: a 24-byte page header (page number, txn id, pad, flags at 18, lower
// bound at 20, upper bound at 22; an overflow page keeps its page count at 20). Node offsets follow the header
// as uint16s; offsets and the bounds count from the end of the header (PAGEBASE); there are lower/2 nodes. A node is lo, hi, flags, key size (uint16 each), then the key, then the data. A branch node's child is
// lo | hi << 16 | flags << 32. A leaf node's data size is lo | hi << 16; with F_BIGDATA its data is the first
// overflow page's number, with F_SUBDATA it is a DB record whose root page sits at byte 40.
//
// Pages that are free (or that continue an overflow value) may hold anything: only what a tree reaches is judged.
import { readSync } from 'node:fs';

export const HEADER = 24;
export const P_BRANCH = 0x01;
export const P_LEAF = 0x02;
export const P_OVERFLOW = 0x04;
export const P_LEAF2 = 0x20;
const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const DB_ROOT_OFFSET = 40;
/** In `kinds`: the page's header carries its own number (the low bits are its flags). */
export const OWN = 0x80;
/** The root page number of an empty sub-DB, as the scan records it (a JS number cannot hold all ones). */
export const EMPTY_CHILD = -1;
/** 8 MiB: a multiple of every LMDB page size (512 B to 64 KiB). */
export const CHUNK_BYTES = 8 * 1024 * 1024;

export interface PageIndex {
  pageSize: number;
  /** Pages scanned: the first `pages` pages of the file (each whole). */
  pages: number;
  /** Per page: 0 when its header does not carry its own number, else OWN | its flags (the low 7 bits). */
  kinds: Uint8Array;
  /** Tree pages (branch children, sub-DB roots) each branch or leaf page points at, when it points at any. */
  children: Map<number, number[]>;
  /** First overflow pages each leaf page points at, when it points at any. */
  overflows: Map<number, number[]>;
  /** The page count of each overflow page that carries its own number. */
  overflowPages: Map<number, number>;
  /** Branch and leaf pages whose nodes lie outside the page: what is wrong. */
  broken: Map<number, string>;
}

const u64 = (buf: Buffer, at: number) => buf.readUInt32LE(at) + buf.readUInt32LE(at + 4) * 0x1_0000_0000;

/**
 * The links of one branch or leaf page (at `base` in `buf`), or what is wrong with it. LMDB places nodes from the end
 * of the page down to `upper`: each node, its key and (on a leaf) its data must lie between `upper` and the page's end.
 */
function linksOf(buf: Buffer, base: number, pageSize: number, flags: number): { children: number[]; overflows: number[] } | string {
  const children: number[] = [];
  const overflows: number[] = [];
  const lower = buf.readUInt16LE(base + 20);
  const upper = buf.readUInt16LE(base + 22);
  if (lower > upper || HEADER + upper > pageSize) return `bounds ${lower}…${upper} do not fit a ${pageSize}-byte page`;
  const count = lower >> 1;
  for (let i = 0; i < count; i++) {
    const at = HEADER + buf.readUInt16LE(base + HEADER + 2 * i);
    if (at < HEADER + upper || at + 8 > pageSize) return `a node at byte ${at} lies outside the page's nodes`;
    const lo = buf.readUInt16LE(base + at);
    const hi = buf.readUInt16LE(base + at + 2);
    const nodeFlags = buf.readUInt16LE(base + at + 4);
    const data = at + 8 + buf.readUInt16LE(base + at + 6);
    if (data > pageSize) return `the key of the node at byte ${at} runs past the page`;
    if (flags & P_BRANCH) {
      children.push(lo + hi * 0x1_0000 + nodeFlags * 0x1_0000_0000);
      continue;
    }
    // On a leaf, lo | hi << 16 is the data's size: kept in the page unless it is on overflow pages (F_BIGDATA).
    const inPage = nodeFlags & F_BIGDATA ? 8 : lo + hi * 0x1_0000;
    if (data + inPage > pageSize) return `the data of the node at byte ${at} runs past the page`;
    if (nodeFlags & F_BIGDATA) overflows.push(u64(buf, base + data));
    else if (nodeFlags & F_SUBDATA) {
      if (data + DB_ROOT_OFFSET + 8 > pageSize) return `the data of the node at byte ${at} runs past the page`;
      const root = buf.readBigUInt64LE(base + data + DB_ROOT_OFFSET);
      children.push(root === 0xffffffffffffffffn ? EMPTY_CHILD : Number(root));
    }
  }
  return { children, overflows };
}

function readFully(fd: number, buf: Buffer, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) throw new Error(`unexpected end of file at byte ${position + done}`);
    done += n;
  }
}

/** Reads the first `pages` pages of the file in CHUNK_BYTES reads and indexes them. */
export function scanPages(fd: number, pageSize: number, pages: number): PageIndex {
  const index: PageIndex = {
    pageSize,
    pages,
    kinds: new Uint8Array(pages),
    children: new Map(),
    overflows: new Map(),
    overflowPages: new Map(),
    broken: new Map(),
  };
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(pageSize, pages * pageSize)));
  const perChunk = chunk.length / pageSize;
  for (let first = 0; first < pages; first += perChunk) {
    const count = Math.min(perChunk, pages - first);
    readFully(fd, chunk, count * pageSize, first * pageSize);
    for (let i = 0; i < count; i++) indexPage(index, chunk, i * pageSize, first + i);
  }
  return index;
}

function indexPage(index: PageIndex, buf: Buffer, base: number, pgno: number): void {
  if (buf.readUInt32LE(base) !== pgno % 0x1_0000_0000 || buf.readUInt32LE(base + 4) !== Math.floor(pgno / 0x1_0000_0000)) return;
  const flags = buf.readUInt16LE(base + 18);
  index.kinds[pgno] = OWN | (flags & 0x7f);
  if (flags & P_OVERFLOW) {
    index.overflowPages.set(pgno, buf.readUInt32LE(base + 20));
    return;
  }
  if (flags & P_LEAF2 || !(flags & (P_BRANCH | P_LEAF))) return;
  const links = linksOf(buf, base, index.pageSize, flags);
  if (typeof links === 'string') index.broken.set(pgno, links);
  else {
    if (links.children.length > 0) index.children.set(pgno, links.children);
    if (links.overflows.length > 0) index.overflows.set(pgno, links.overflows);
  }
}
