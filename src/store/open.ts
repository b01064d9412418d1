// Opens the engine the configuration names; the only place that names one.
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../logger.ts';
import { openLmdbStore } from './lmdb/index.ts';
import { openPostgresStore } from './postgres/store.ts';
import type { Store } from './repos.ts';

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
