// Checks LMDB's data file before lmdb-js maps it. LMDB trusts its file: a truncated file is mapped anyway and the
// first read past its end kills the process with SIGBUS; overwritten pages crash it with SIGSEGV or SIGABRT, maybe
// long after start-up, after it acknowledged messages. All print nothing useful. This turns them into one clear line.
//
// Always, whatever the file's size: the meta pages are judged (meta-pages.ts), the file is read once from start to
// end in 8 MiB chunks (page-scan.ts), and the trees of every meta are walked over what was read
// (reachable-pages.ts): every page in use must be inside the file and carry its own page number, and be the kind of
// page the tree expects. Free pages may hold anything (LMDB writes a free page before it reads it again).
//
// A file that ends before the meta's last page is not necessarily damaged: LMDB does not write the pages a
// transaction allocated and freed again ("loose" pages go to the free list unwritten), so a file a crash left behind
// can end a page or more early (seen after a SIGKILL here). If every page in use is inside the file, it opens.
//
// An empty data file is what LMDB creates before it writes its first meta pages; next to the files an earlier run
// left (LMDB's lock file, the generated service secret) it means the data is gone, and is refused.
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { StoreOpenError } from '../errors.ts';
import { pageSizeOf, readMetas } from './meta-pages.ts';
import { scanPages } from './page-scan.ts';
import { walkTrees } from './reachable-pages.ts';

const restore = 'restore the directory from a backup (or move it away to start empty)';
/** Files an earlier run of Parley leaves in its storage directory. */
const EARLIER_RUN_FILES = ['lock.mdb', 'service-secret'];

function readAt(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.alloc(length);
  const n = readSync(fd, buf, 0, length, position);
  return buf.subarray(0, n);
}

/** Throws StoreOpenError with one line naming the file and what is wrong; a missing file (a new store) is fine. */
export function checkLmdbDataFile(dir: string): void {
  const file = join(dir, 'data.mdb');
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r');
  try {
    checkOpenFile(fd, file, dir);
  } finally {
    closeSync(fd);
  }
}

function checkOpenFile(fd: number, file: string, dir: string): void {
  const size = fstatSync(fd).size;
  if (size === 0) {
    const earlier = EARLIER_RUN_FILES.filter((f) => existsSync(join(dir, f)));
    if (earlier.length === 0) return; // created but never written, in a new directory: LMDB initialises it
    throw new StoreOpenError(
      `${file} is empty (0 bytes), but ${dir} holds files of an earlier run (${earlier.join(', ')}): the store's data is gone. ` +
        `Restore the directory from a backup, or move it away to start with an empty store`,
    );
  }
  const page0 = readAt(fd, 65536, 0);
  const pageSize = pageSizeOf(page0);
  if (size < 2 * pageSize) throw new StoreOpenError(`${file} is truncated (${size} bytes, less than its two header pages): ${restore}`);
  const read = readMetas(page0.subarray(0, pageSize), readAt(fd, pageSize, pageSize));
  if ('damaged' in read) {
    const both = read.damaged.some((d) => d.startsWith('header page 0')) && read.damaged.some((d) => d.startsWith('header page 1'));
    const what = both ? 'both header pages are damaged or overwritten' : read.damaged.join('; ');
    throw new StoreOpenError(`${file} is not a readable LMDB data file (${what}): ${restore}`);
  }
  const filePages = Math.floor(size / pageSize);
  const highest = read.metas.reduce((n, m) => (m.lastPage > n ? m.lastPage : n), 0n);
  const index = scanPages(fd, pageSize, Math.min(filePages, Number(highest) + 1));
  const seen = new Uint8Array(index.pages);
  // The newest first: the one LMDB normally opens, and the one whose pages are the file's latest writes.
  for (const meta of [...read.metas].sort((a, b) => (b.txnId > a.txnId ? 1 : b.txnId < a.txnId ? -1 : 0))) {
    const walk = walkTrees(index, { filePages, lastPage: Number(meta.lastPage), roots: meta.roots }, seen);
    if ('missing' in walk) {
      const end = (walk.missing + 1n) * BigInt(pageSize);
      throw new StoreOpenError(`${file} is truncated (${size} bytes; page ${walk.missing}, in use, ends at byte ${end}): ${restore}`);
    }
    if ('damaged' in walk) throw new StoreOpenError(`${file} is damaged (${meta.where}: ${walk.damaged}): ${restore}`);
  }
}
