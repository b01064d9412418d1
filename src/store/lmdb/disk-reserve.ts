// Keeps disk space allocated ahead of LMDB's data file, so LMDB itself never meets a full disk.
//
// lmdb-js does not survive a write that fails with ENOSPC: its writer thread corrupts the heap ("corrupted size
// vs. prev_size", then abort) — reproduced here on a 40 MB tmpfs. So Parley never lets LMDB get there: it
// reserves `reserveBytes` of real blocks past the last page LMDB uses (fallocate --keep-size: blocks beyond the
// end of file, which LMDB's later page writes fill without allocating), tops the reserve up as the file grows,
// and refuses writes itself (StoreUnavailableError `ENOSPC`) once less than `minFreeBytes` of it is left and no
// more can be had. Space reserved this way belongs to the file, so another process filling the disk cannot take
// it. `limitBytes` (storage.map_size_mb) caps the file the same way (`map_full`): lmdb-js grows LMDB's map on
// demand, so without this the size setting would limit nothing.
//
// Where fallocate is not available (the command is missing, or the filesystem refuses it), the guard falls back
// to the filesystem's free space (statfs). Copy-on-write filesystems (btrfs, ZFS) may need new blocks even to
// overwrite reserved ones: there the reserve narrows the window but cannot close it.
import { execFile } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export type Allocate = (file: string, offset: number, length: number) => Promise<void>;

/** `fallocate --keep-size`: real blocks, file size unchanged; rejects with the errno's code (ENOSPC, EOPNOTSUPP…). */
export const fallocateKeepSize: Allocate = async (file, offset, length) => {
  try {
    await execFileAsync('fallocate', ['--keep-size', '--offset', String(offset), '--length', String(length), file], { timeout: 10_000 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw Object.assign(new Error('the fallocate command is not installed'), { code: 'ENOTSUP' });
    const stderr = String(e.stderr ?? '');
    const code = /No space left/i.test(stderr) ? 'ENOSPC' : /not supported/i.test(stderr) ? 'ENOTSUP' : /Read-only/i.test(stderr) ? 'EROFS' : 'EIO';
    throw Object.assign(new Error(stderr.trim() || e.message), { code });
  }
};

export type ReserveState = { ok: true } | { ok: false; code: string; message: string };

export interface DiskReserveOptions {
  file: string;
  /** Bytes LMDB uses now: (last page number + 1) × page size. */
  usedBytes: () => number;
  reserveBytes: number;
  minFreeBytes: number;
  limitBytes: number;
  allocate?: Allocate;
  /** Free bytes on the filesystem (the fallback when fallocate is unavailable). */
  freeBytes?: (dir: string) => number;
  intervalMs?: number;
  onChange?: (state: ReserveState) => void;
}

export interface DiskReserve {
  /** Whether a write may go to LMDB now (decided by the last check). */
  state(): ReserveState;
  /** Measures and tops up the reserve; resolves with the new state. Runs one at a time. */
  check(): Promise<ReserveState>;
  start(): void;
  stop(): void;
}

const MB = 1024 * 1024;
const RETRY_WHEN_FULL_MS = 1000;

export function createDiskReserve(o: DiskReserveOptions): DiskReserve {
  const allocate = o.allocate ?? fallocateKeepSize;
  const freeBytes =
    o.freeBytes ??
    ((dir: string) => {
      const s = statfsSync(dir);
      return s.bavail * s.bsize;
    });
  let allocatedEnd = 0;
  let lastFailedAt = -Infinity;
  let fallbackToStatfs = false;
  let current: ReserveState = { ok: true };
  let running: Promise<ReserveState> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const set = (next: ReserveState) => {
    const changed = next.ok !== current.ok || (!next.ok && !current.ok && next.code !== current.code);
    current = next;
    if (changed) o.onChange?.(next);
    return next;
  };

  /** Tries to own blocks up to `target`, halving the ask down to `minimum`; returns the end now owned. */
  const topUp = async (used: number, target: number, minimum: number): Promise<{ end: number; error?: NodeJS.ErrnoException }> => {
    let want = target;
    for (;;) {
      try {
        // From 0: blocks already owned cost nothing, and a file written before a restart is covered as well.
        await allocate(o.file, 0, want);
        return { end: want };
      } catch (err) {
        const error = err as NodeJS.ErrnoException;
        if (error.code !== 'ENOSPC' || want <= minimum) return { end: allocatedEnd, error };
        want = Math.max(minimum, used + Math.floor((want - used) / 2));
      }
    }
  };

  const measure = async (): Promise<ReserveState> => {
    const used = o.usedBytes();
    if (used + o.minFreeBytes > o.limitBytes) {
      return set({ ok: false, code: 'map_full', message: `the store reached its size limit (storage.map_size_mb = ${Math.round(o.limitBytes / MB)})` });
    }
    if (fallbackToStatfs) {
      const free = freeBytes(dirname(o.file));
      if (free < o.minFreeBytes)
        return set({ ok: false, code: 'ENOSPC', message: `only ${Math.round(free / 1024)} KB free on the data directory's filesystem` });
      return set({ ok: true });
    }
    const target = Math.min(used + o.reserveBytes, o.limitBytes);
    // While the disk is full, asking again every check would start a process five times a second for nothing.
    const retryDue = Date.now() - lastFailedAt >= RETRY_WHEN_FULL_MS;
    if (allocatedEnd - used < o.reserveBytes / 2 && target > allocatedEnd && retryDue) {
      const { end, error } = await topUp(used, target, used + o.minFreeBytes);
      if (error) lastFailedAt = Date.now();
      allocatedEnd = Math.max(allocatedEnd, end);
      if (error && error.code !== 'ENOSPC') {
        if (error.code === 'ENOTSUP') {
          fallbackToStatfs = true;
          return measure();
        }
        if (allocatedEnd - used < o.minFreeBytes) return set({ ok: false, code: error.code ?? 'EIO', message: error.message });
      }
    }
    if (allocatedEnd - used < o.minFreeBytes) {
      return set({
        ok: false,
        code: 'ENOSPC',
        message: `no space left on the data directory's filesystem (${Math.round((allocatedEnd - used) / 1024)} KB reserved)`,
      });
    }
    return set({ ok: true });
  };

  const reserve: DiskReserve = {
    state: () => current,
    check() {
      running ??= measure().finally(() => (running = undefined));
      return running;
    },
    start() {
      timer = setInterval(() => void reserve.check().catch(() => undefined), o.intervalMs ?? 200);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
  return reserve;
}
