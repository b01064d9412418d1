// Opens the engine the configuration names (or, for tools, one named by a location): the only place outside the
// engines that names one.
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../logger.ts';
import { exportLmdb } from './lmdb/export.ts';
import { openLmdbStore } from './lmdb/index.ts';
import { openPostgresStore } from './postgres/store.ts';
import type { Store } from './repos.ts';
import type { StoreRecord } from './transfer.ts';

export async function openStore(storage: Config['storage'], o: { logger?: Logger; clock?: Clock } = {}): Promise<Store> {
  if (storage.engine === 'postgres') return openPostgresStore({ url: storage.url!, poolSize: storage.pool_size, logger: o.logger, clock: o.clock });
  return openLmdbStore({ path: storage.path, mapSizeMb: storage.map_size_mb, diskReserveMb: storage.disk_reserve_mb, logger: o.logger });
}

/** A store named by a location: `lmdb:<path>` or a `postgres://` URL (for tools such as migrate-store). */
export async function openStoreAt(location: string, o: { logger?: Logger; poolSize?: number } = {}): Promise<Store> {
  if (location.startsWith('lmdb:')) return openLmdbStore({ path: location.slice('lmdb:'.length), logger: o.logger });
  if (/^postgres(ql)?:\/\//.test(location)) return openPostgresStore({ url: location, poolSize: o.poolSize, logger: o.logger });
  throw new Error(`not a store location: ${location} (expected lmdb:<path> or postgres://…)`);
}

/** An LMDB store opened to be copied out (migrate-store): every record it holds, as domain records. */
export interface LmdbSource {
  location: string;
  records(): AsyncIterable<StoreRecord>;
  close(): Promise<void>;
}

/** Opens an LMDB store as a source to copy: refused, like a running Parley, while another process has it open. */
export async function openLmdbSource(path: string, o: { logger?: Logger } = {}): Promise<LmdbSource> {
  const store = await openLmdbStore({ path, logger: o.logger, diskReserveMb: 1 });
  return { location: store.location, records: () => exportLmdb(store.kv), close: () => store.close() };
}
