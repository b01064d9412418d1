// Walks the B-trees of an LMDB data file over the index page-scan.ts built in one sequential pass, and finds the
// first page a reader or writer would touch that the file does not hold (`missing`), or that does not hold what
// the tree expects (`damaged`): a page that does not carry its own page number (it was overwritten, or never
// written), a page that is neither a branch nor a leaf where the tree expects one, an overflow value whose first
// page is not an overflow page, nodes outside their page, or links outside the pages the meta says exist.
import { EMPTY_CHILD, OWN, P_BRANCH, P_LEAF, P_LEAF2, P_OVERFLOW, scanPages, type PageIndex } from './page-scan.ts';

/** The root page number of an empty DB. */
export const EMPTY_ROOT = 0xffffffffffffffffn;

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

/** Every page reachable from `roots` (sub-databases and overflow pages included) must be inside the file and whole. */
export function findMissingReachablePage(input: PageWalkInput): PageWalkResult {
  const last = Number(input.lastPage);
  const index = scanPages(input.fd, input.pageSize, Math.min(Number(input.filePages), last + 1));
  return walkTrees(index, { filePages: Number(input.filePages), lastPage: last, roots: input.roots }, new Uint8Array(index.pages));
}

export interface TreeWalk {
  filePages: number;
  lastPage: number;
  roots: bigint[];
}

/**
 * Walks from `roots` over `index`. `seen` (one byte per scanned page) may be shared between walks of the same file
 * (the trees of its two metas share most pages): a page already judged is not judged again.
 */
export function walkTrees(index: PageIndex, walk: TreeWalk, seen: Uint8Array): PageWalkResult {
  const { filePages, lastPage } = walk;
  let visited = 0;
  const pending: number[] = [];
  for (const root of walk.roots) {
    if (root === EMPTY_ROOT) continue;
    if (root > BigInt(lastPage)) return { ok: false, damaged: `root page ${root} is beyond the last page ${lastPage}` };
    pending.push(Number(root));
  }
  const inRange = (p: number) => p >= 2 && p <= lastPage;
  while (pending.length > 0) {
    const pgno = pending.pop()!;
    if (!inRange(pgno)) return { ok: false, damaged: `page ${pgno} is referenced but outside 2…${lastPage}` };
    if (pgno >= filePages) return { ok: false, missing: BigInt(pgno) };
    if (seen[pgno] === 1) continue;
    seen[pgno] = 1;
    visited++;
    const kind = index.kinds[pgno];
    if (!(kind & OWN)) return { ok: false, damaged: `page ${pgno}, in use, does not carry its own page number: it was overwritten` };
    if (kind & P_LEAF2) continue;
    if (!(kind & (P_BRANCH | P_LEAF))) return { ok: false, damaged: `page ${pgno}, in use, is neither a branch nor a leaf` };
    const broken = index.broken.get(pgno);
    if (broken) return { ok: false, damaged: `page ${pgno}, in use: ${broken}` };
    for (const child of index.children.get(pgno) ?? []) if (child !== EMPTY_CHILD) pending.push(child);
    for (const first of index.overflows.get(pgno) ?? []) {
      const run = overflowRun(index, walk, pgno, first);
      if (typeof run !== 'number') return run;
      visited += run;
    }
  }
  return { ok: true, visited: BigInt(visited) };
}

/** The length of the overflow run at `first` that leaf page `from` points at, or what is wrong with it. */
function overflowRun(index: PageIndex, walk: TreeWalk, from: number, first: number): number | PageWalkResult {
  if (first < 2 || first > walk.lastPage) return { ok: false, damaged: `page ${from} points at overflow page ${first}` };
  if (first >= walk.filePages) return { ok: false, missing: BigInt(first) };
  const kind = index.kinds[first];
  if (!(kind & OWN)) return { ok: false, damaged: `overflow page ${first}, in use, does not carry its own page number: it was overwritten` };
  if (!(kind & P_OVERFLOW)) return { ok: false, damaged: `page ${first} is not an overflow page` };
  const count = index.overflowPages.get(first) ?? 0;
  const last = first + count - 1;
  if (count < 1 || last > walk.lastPage) return { ok: false, damaged: `overflow pages ${first}…${last} pass ${walk.lastPage}` };
  if (last >= walk.filePages) return { ok: false, missing: BigInt(walk.filePages) };
  return count;
}
