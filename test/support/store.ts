// A real LMDB store in a temp dir for tests that drive features on the store directly (no server). Its `kv` is
// the engine's key-value layer, for the tests that check LMDB's own key layout (test/unit/*lmdb*).
import { openLmdbStore, type OpenLmdbOptions } from '../../src/store/lmdb/index.ts';
import { tempDir } from './tmp.ts';

/** A small reserve, as in support/parley.ts: a test run opens hundreds of stores (src/store/lmdb/disk-reserve.ts). */
export const TEST_DISK_RESERVE_MB = 1;

export type TestStore = Awaited<ReturnType<typeof openLmdbStore>>;

export function openTestStore(path = tempDir('parley-store-'), o: Omit<OpenLmdbOptions, 'path'> = {}): Promise<TestStore> {
  return openLmdbStore(Object.assign({ path, diskReserveMb: TEST_DISK_RESERVE_MB }, o));
}
