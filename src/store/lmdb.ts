import { mkdirSync } from 'node:fs';
import { open, type Database, type DatabaseOptions, type RootDatabase } from 'lmdb';
import { migrations as defaultMigrations, type Migration } from './migrations.ts';
import { TABLES, type Key, type RangeOptions, type Store, type StoreWrite, type Table, type TableName } from './types.ts';

export interface OpenStoreOptions {
  path: string;
  mapSizeMb?: number;
  migrations?: Migration[];
}

const DELETE = Symbol('delete');

/**
 * Writes made inside `store.transaction` are buffered and applied only when the
 * callback returns: a callback that throws leaves nothing behind (lmdb-js would
 * otherwise commit the writes made before the throw). Reads inside the
 * callback see the buffered writes (`get`); range scans see committed data.
 */
interface TxBuffer {
  writes: Map<string, { db: Database<unknown, Key>; key: Key; value: unknown }>;
}

function wrapTable<V>(name: string, db: Database<V, Key>, active: () => TxBuffer | undefined, flushed: () => Promise<unknown>, open: () => void): Table<V> {
  const bufferKey = (key: Key) => `${name}\u0000${JSON.stringify(key)}`;
  const inTx = (what: string) => {
    const tx = active();
    if (!tx) throw new Error(`${what} outside store.transaction`);
    return tx;
  };
  return {
    get: (key) => {
      open();
      const tx = active();
      const w = tx?.writes.get(bufferKey(key));
      if (w) return w.value === DELETE ? undefined : (w.value as V);
      return db.get(key);
    },
    put: async (key, value) => {
      await db.put(key, value);
      await flushed();
    },
    remove: async (key) => {
      await db.remove(key);
      await flushed();
    },
    range: (o: RangeOptions = {}) => {
      open();
      return db.getRange(o) as Iterable<{ key: Key; value: V }>;
    },
    count: (o: RangeOptions = {}) => {
      open();
      return db.getKeysCount(o);
    },
    putInTx: (key, value) => {
      inTx('putInTx').writes.set(bufferKey(key), { db: db as Database<unknown, Key>, key, value });
    },
    removeInTx: (key) => {
      inTx('removeInTx').writes.set(bufferKey(key), { db: db as Database<unknown, Key>, key, value: DELETE });
    },
  };
}

/**
 * msgpack without records: lmdb-js keeps no shared structures here, so with records msgpackr would
 * write each value's record definitions inline and rebuild them on every encode. Plain maps are
 * ~30% cheaper to encode and decode and no larger. Values written with inline records (before this
 * option) are self-describing and still decode.
 */
const tableOptions = (name: string): DatabaseOptions & { name: string; useRecords: boolean } => ({ name, encoding: 'msgpack', useRecords: false });

export function openLmdbStore(options: OpenStoreOptions): Store {
  mkdirSync(options.path, { recursive: true });
  const root: RootDatabase = open({
    path: options.path,
    mapSize: (options.mapSizeMb ?? 2048) * 1024 * 1024,
    maxDbs: 32,
  });
  let activeTx: TxBuffer | undefined;
  let closed = false;
  // Reads after close() began would open a new shared read transaction that lmdb-js resets on a timer,
  // which throws out of the event loop once the environment is closed.
  const assertOpen = () => {
    if (closed) throw new Error('the store is closed');
  };
  const tables = new Map<TableName, Table<unknown>>();
  const dbs = new Map<TableName, Database<unknown, Key>>();
  for (const name of TABLES) {
    const db = root.openDB<unknown, Key>(tableOptions(name));
    dbs.set(name, db);
    tables.set(
      name,
      wrapTable(
        name,
        db,
        () => activeTx,
        () => root.flushed,
        assertOpen,
      ),
    );
  }
  /** The puts of a write-thread block (no main-thread transaction), checked before anything is queued. */
  const writeBlock = (what: string, writes: StoreWrite[]) => {
    assertOpen();
    if (activeTx) throw new Error(`${what} inside store.transaction`);
    for (const w of writes) dbFor(w.table); // an unknown table throws here, before anything is queued
    return () => {
      for (const w of writes) void dbFor(w.table).put(w.key, w.value);
    };
  };
  const dbFor = (name: TableName) => {
    const db = dbs.get(name);
    if (!db) throw new Error(`unknown table ${name}`);
    return db;
  };

  const list = options.migrations ?? defaultMigrations;
  const latest = Math.max(0, ...list.map((m) => m.version));
  const migrationState = () => {
    const v = store.schemaVersion();
    return v === latest ? 'ok' : v < latest ? `pending (at ${v}, latest ${latest})` : `data is newer (${v}) than this build (${latest})`;
  };

  const store: Store = {
    path: options.path,
    table<V>(name: TableName) {
      const t = tables.get(name);
      if (!t) throw new Error(`unknown table ${name}`);
      return t as Table<V>;
    },
    // lmdb-js resolves a transaction when it is committed (visible, and safe from a process crash);
    // with overlappingSync (the default on Linux) the fsync follows. Callers acknowledge on this
    // promise, so it also waits for that flush: an acknowledged write survives a power loss too.
    // Measured here: 54k → 36k transactions/s with 32 writers, p50 0.43 → 0.53 ms.
    transaction: async (fn) => {
      const result = await root.transaction(() => {
        const tx: TxBuffer = { writes: new Map() };
        activeTx = tx;
        try {
          const result = fn();
          for (const w of tx.writes.values()) {
            // Inside lmdb-js's write transaction these apply synchronously; their promises carry nothing.
            if (w.value === DELETE) void w.db.remove(w.key);
            else void w.db.put(w.key, w.value);
          }
          return result;
        } finally {
          activeTx = undefined;
        }
      });
      await root.flushed;
      return result;
    },
    insertIfAbsent: async (guard, writes: StoreWrite[]) => {
      // A conditional block lmdb-js runs on its write thread: the puts apply only if the guard key is absent then.
      const applied = await dbFor(guard.table).ifNoExists(guard.key, writeBlock('insertIfAbsent', writes));
      await root.flushed;
      return applied;
    },
    writeBatch: async (writes: StoreWrite[]) => {
      const block = writeBlock('writeBatch', writes);
      if (writes.length === 0) return;
      await root.batch(block);
      await root.flushed;
    },
    checks() {
      if (closed) return { database: 'closed', migrations: 'unknown' };
      try {
        return { database: 'ok', migrations: migrationState() };
      } catch (err) {
        return { database: (err as Error).message, migrations: 'unknown' };
      }
    },
    schemaVersion: () => store.table<number>('meta').get('schemaVersion') ?? 0,
    flushed: async () => {
      await root.flushed;
    },
    async close() {
      if (closed) return;
      closed = true;
      await root.flushed;
      // lmdb-js resets its shared read transaction on a setTimeout(0) after reads: let a pending reset run first.
      await new Promise((resolve) => setTimeout(resolve, 0));
      await root.close();
    },
  };

  return store;
}

/** Runs the migrations the store has not seen yet, in order. */
export async function migrate(store: Store, list: Migration[] = defaultMigrations): Promise<number> {
  const meta = store.table<number>('meta');
  const sorted = [...list].sort((a, b) => a.version - b.version);
  for (const m of sorted) {
    if (m.version <= store.schemaVersion()) continue;
    await store.transaction(() => {
      m.up(store);
      meta.putInTx('schemaVersion', m.version);
    });
  }
  return store.schemaVersion();
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const store = openLmdbStore(options);
  const version = store.schemaVersion();
  const latest = Math.max(0, ...(options.migrations ?? defaultMigrations).map((m) => m.version));
  if (version > latest) throw new Error(`storage at ${options.path} has schema ${version}, newer than this build (${latest})`);
  await migrate(store, options.migrations);
  return store;
}
