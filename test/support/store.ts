// A real LMDB store in a temp dir for tests that drive features on the store directly (no server). Its `kv` is
// the engine's key-value layer, for the tests that check LMDB's own key layout (test/unit/*lmdb*).
import { openLmdbStore, type OpenLmdbOptions } from '../../src/store/lmdb/index.ts';
import type { Kv, TableName } from '../../src/store/lmdb/kv.ts';
import type { MessageRecord } from '../../src/store/model.ts';
import type { Store } from '../../src/store/repos.ts';
import { tempDir } from './tmp.ts';

/** A small reserve, as in support/parley.ts: a test run opens hundreds of stores (src/store/lmdb/disk-reserve.ts). */
export const TEST_DISK_RESERVE_MB = 1;

export type TestStore = Awaited<ReturnType<typeof openLmdbStore>>;

export function openTestStore(path = tempDir('parley-store-'), o: Omit<OpenLmdbOptions, 'path'> = {}): Promise<TestStore> {
  return openLmdbStore(Object.assign({ path, diskReserveMb: TEST_DISK_RESERVE_MB }, o));
}

/**
 * The LMDB engine's key-value layer under a running store, for the few checks that look at everything stored (no
 * side effect at all, nothing stored in clear) rather than through one repository's operations.
 */
export function lmdbKv(store: Store): Kv {
  const kv = (store as Partial<TestStore>).kv;
  if (store.engine !== 'lmdb' || !kv) throw new Error(`this check reads LMDB's tables; the store is ${store.engine}`);
  return kv;
}

/** Every key and value of these tables, as one string (compare two to see whether anything was written). */
export const dumpTables = (store: Store, tables: TableName[]) =>
  tables.map((t) => JSON.stringify([...lmdbKv(store).range(t)].map((r) => [r.key, r.value]))).join('|');

/** A conversation's whole history, oldest first. */
export const historyOf = async (store: Store, conversationId: string): Promise<MessageRecord[]> =>
  (await store.history.since(conversationId, 0)).map((r) => r.record);
