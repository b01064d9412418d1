// The disk reserve decides whether LMDB may be written: with a fake disk (an allocate function that owns blocks
// up to a capacity) and a fake LMDB size.
import { describe, expect, it } from 'vitest';
import { createDiskReserve, type Allocate } from '../../src/store/lmdb/disk-reserve.ts';

const MB = 1024 * 1024;

function fakeDisk(capacity: number) {
  const disk = { capacity, owned: 0, calls: 0 };
  const allocate: Allocate = async (_file, offset, length) => {
    disk.calls++;
    const end = offset + length;
    if (end > disk.capacity) throw Object.assign(new Error('No space left on device'), { code: 'ENOSPC' });
    disk.owned = Math.max(disk.owned, end);
  };
  return { disk, allocate };
}

describe('disk reserve', () => {
  it('keeps the reserve ahead of the data; refuses (ENOSPC) once less than the minimum can be had; recovers when space returns', async () => {
    const { disk, allocate } = fakeDisk(20 * MB);
    let used = 2 * MB;
    const changes: string[] = [];
    const r = createDiskReserve({
      file: '/x/data.mdb',
      usedBytes: () => used,
      reserveBytes: 8 * MB,
      minFreeBytes: 2 * MB,
      limitBytes: 1000 * MB,
      allocate,
      onChange: (s) => changes.push(s.ok ? 'ok' : s.code),
    });
    expect(await r.check()).toEqual({ ok: true });
    expect(disk.owned).toBe(10 * MB);
    used = 5 * MB; // more than half the reserve left: nothing asked
    const calls = disk.calls;
    await r.check();
    expect(disk.calls).toBe(calls);
    used = 15 * MB; // the file outgrew the reserve; the disk has 5 MB left past it
    expect(await r.check()).toEqual({ ok: true });
    expect(disk.owned).toBe(19 * MB); // the full reserve did not fit: half of it did
    used = 19 * MB; // 1 MB reserved, under the minimum, and nothing more to be had
    await new Promise((res) => setTimeout(res, 1100)); // retries while full wait a second
    expect(await r.check()).toMatchObject({ ok: false, code: 'ENOSPC' });
    expect(r.state().ok).toBe(false);
    disk.capacity = 100 * MB; // space freed
    await new Promise((res) => setTimeout(res, 1100));
    expect(await r.check()).toEqual({ ok: true });
    expect(disk.owned).toBe(27 * MB);
    expect(changes).toEqual(['ENOSPC', 'ok']);
  });

  it('the size limit: map_full once the data would pass it', async () => {
    const { allocate } = fakeDisk(1000 * MB);
    let used = 1 * MB;
    const r = createDiskReserve({ file: '/x/data.mdb', usedBytes: () => used, reserveBytes: 4 * MB, minFreeBytes: MB, limitBytes: 8 * MB, allocate });
    expect(await r.check()).toEqual({ ok: true });
    used = 7.5 * MB;
    expect(await r.check()).toMatchObject({ ok: false, code: 'map_full' });
  });

  it('without fallocate (not supported), the filesystem’s free space decides', async () => {
    let free = 50 * MB;
    const r = createDiskReserve({
      file: '/x/data.mdb',
      usedBytes: () => MB,
      reserveBytes: 8 * MB,
      minFreeBytes: 2 * MB,
      limitBytes: 1000 * MB,
      allocate: async () => {
        throw Object.assign(new Error('fallocate: not supported'), { code: 'ENOTSUP' });
      },
      freeBytes: () => free,
    });
    expect(await r.check()).toEqual({ ok: true });
    free = MB;
    expect(await r.check()).toMatchObject({ ok: false, code: 'ENOSPC' });
  });
});
