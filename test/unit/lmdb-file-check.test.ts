// The data-file check before LMDB maps a file (src/store/lmdb/file-check.ts), on files lmdb-js really wrote.
import { closeSync, openSync, readSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { checkLmdbDataFile } from '../../src/store/lmdb/file-check.ts';
import { StoreOpenError } from '../../src/store/errors.ts';
import { tempDir } from '../support/tmp.ts';

const PAGE = 4096;

/** A store lmdb-js wrote and closed: a few hundred records over many pages. */
async function writtenStore(): Promise<string> {
  const dir = tempDir();
  const db = open({ path: dir });
  for (let batch = 0; batch < 5; batch++) {
    await db.transaction(() => {
      for (let i = 0; i < 200; i++) void db.put(`k${batch}-${i}`, 'x'.repeat(500));
    });
  }
  await db.close();
  return dir;
}

/** The current meta page (the one with the higher transaction id) as the documented offsets read it. */
function currentMeta(file: string) {
  const fd = openSync(file, 'r');
  const metas = [0, 1].map((n) => {
    const b = Buffer.alloc(PAGE);
    readSync(fd, b, 0, PAGE, n * PAGE);
    return { page: n, freeRoot: b.readBigUInt64LE(88), mainRoot: b.readBigUInt64LE(136), lastPage: b.readBigUInt64LE(144), txnId: b.readBigUInt64LE(152) };
  });
  closeSync(fd);
  return metas.reduce((a, b) => (b.txnId > a.txnId ? b : a));
}

describe('the LMDB data-file check', () => {
  it('reads the roots where lmdb-js writes them: non-empty, within the last page, within the file', async () => {
    const file = join(await writtenStore(), 'data.mdb');
    const meta = currentMeta(file);
    expect(meta.mainRoot).toBeGreaterThan(1n);
    expect(meta.mainRoot).toBeLessThanOrEqual(meta.lastPage);
    expect(BigInt(statSync(file).size)).toBeGreaterThanOrEqual((meta.mainRoot + 1n) * BigInt(PAGE));
    expect(() => checkLmdbDataFile(join(file, '..'))).not.toThrow();
  });

  it('a file cut before a root page is refused with one line; cut just after the last root, it passes', async () => {
    const dir = await writtenStore();
    const file = join(dir, 'data.mdb');
    const meta = currentMeta(file);
    const roots = [meta.freeRoot, meta.mainRoot].filter((p) => p !== 0xffffffffffffffffn);
    const lastRoot = roots.reduce((a, b) => (b > a ? b : a));
    truncateSync(file, Number((lastRoot + 1n) * BigInt(PAGE)));
    expect(() => checkLmdbDataFile(dir)).not.toThrow();
    truncateSync(file, Number(lastRoot * BigInt(PAGE)));
    expect(() => checkLmdbDataFile(dir)).toThrow(StoreOpenError);
    expect(() => checkLmdbDataFile(dir)).toThrow(/data\.mdb is truncated .*restore the directory from a backup/);
  });

  it('a file ending before its last page number, with its roots inside, passes (unwritten loose pages after a crash)', async () => {
    const dir = await writtenStore();
    const file = join(dir, 'data.mdb');
    const meta = currentMeta(file);
    // What a crash leaves when the transaction's last allocated pages were freed again and never written.
    const fd = openSync(file, 'r+');
    const last = Buffer.alloc(8);
    last.writeBigUInt64LE(BigInt(Math.ceil(statSync(file).size / PAGE)) + 2n);
    writeSync(fd, last, 0, 8, meta.page * PAGE + 144);
    closeSync(fd);
    expect(currentMeta(file).lastPage).toBeGreaterThan(BigInt(statSync(file).size / PAGE));
    expect(() => checkLmdbDataFile(dir)).not.toThrow();
  });
});
