// The current meta page of an LMDB data file (the one with the higher transaction id), read at the offsets
// src/store/lmdb/file-check.ts documents: tests that cut or alter a store's file aim with it.
import { closeSync, openSync, readSync } from 'node:fs';

export const LMDB_PAGE = 4096;

export function currentLmdbMeta(file: string) {
  const fd = openSync(file, 'r');
  const metas = [0, 1].map((n) => {
    const b = Buffer.alloc(LMDB_PAGE);
    readSync(fd, b, 0, LMDB_PAGE, n * LMDB_PAGE);
    return { page: n, freeRoot: b.readBigUInt64LE(88), mainRoot: b.readBigUInt64LE(136), lastPage: b.readBigUInt64LE(144), txnId: b.readBigUInt64LE(152) };
  });
  closeSync(fd);
  return metas.reduce((a, b) => (b.txnId > a.txnId ? b : a));
}
