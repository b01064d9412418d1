// The LMDB environment under the repositories: named sub-databases with msgpack values, reads straight from the
// memory map, every write through one gate (`commit`) that refuses it when the disk reserve says so and keeps the
// write health current. A transaction buffers its writes and applies them when its callback settles, inside
// lmdb-js's write transaction: a callback that throws leaves nothing behind.
import { join } from 'node:path';
import { compareKeys, open, type Database, type DatabaseOptions, type RootDatabase } from 'lmdb';
import { StoreUnavailableError } from '../errors.ts';
import { classifyCommitFailure } from './commit-failure.ts';
import { createWriteHealth, type WriteHealth } from '../write-health.ts';
import { createDiskReserve, type Allocate, type DiskReserve } from './disk-reserve.ts';
import { checkLmdbDataFile } from './file-check.ts';

export type Key = string | number | (string | number)[];

export interface RangeOptions {
  start?: Key;
  end?: Key;
  reverse?: boolean;
  limit?: number;
}

export const TABLES = [
  'meta',
  'customers',
  'identities',
  'conversations',
  'messages',
  'magicLinks',
  'proactive',
  'jobs',
  'telemetry',
  'turnCalls',
  'webhookSeen',
  'outbox',
  'sendAttempts',
  'sent',
  'inbox',
  'knowledgeArticles',
  'knowledgeUrls',
  'knowledgeChunks',
  'knowledgeIndex',
  'agents',
  'agentEmails',
  'agentCredentials',
  'outcomes',
  'outcomeIndex',
  'inboxThreads',
  'inboxNotes',
  'savedReplies',
  'inboxReads',
] as const;
export type TableName = (typeof TABLES)[number];

export interface KvWrite {
  table: TableName;
  key: Key;
  value: unknown;
}

/** Reads of committed data (and, in a transaction, of its own buffered writes too). */
export interface KvRead {
  get<V>(table: TableName, key: Key): V | undefined;
  range<V>(table: TableName, o?: RangeOptions): Iterable<{ key: Key; value: V }>;
  count(table: TableName, o?: RangeOptions): number;
}

/** Where a repository reads and writes: the environment itself (each write its own commit) or a transaction. */
export interface KvScope extends KvRead {
  /** Outside a transaction: its own durable commit. Inside: buffered, applied when the transaction commits. */
  put(table: TableName, key: Key, value: unknown): Promise<void>;
  remove(table: TableName, key: Key): Promise<void>;
  /** Runs `fn` atomically: in this transaction, or in a new one when outside. */
  atomically<T>(fn: (scope: KvScope) => Promise<T>): Promise<T>;
  readonly inTransaction: boolean;
  /** Runs `fn` once this transaction has committed (`true`) or failed (outside one: at once, with `true`). */
  afterSettled(fn: (committed: boolean) => void): void;
}

export interface Kv extends KvRead {
  readonly path: string;
  readonly direct: KvScope;
  transaction<T>(fn: (tx: KvScope) => Promise<T>): Promise<T>;
  /** Applies `writes` only if `guard` is absent (checked inside the commit, on lmdb-js's write thread); resolves once durable. */
  insertIfAbsent(guard: { table: TableName; key: Key }, writes: KvWrite[]): Promise<boolean>;
  /** Write-only batch in one commit, encoded before this returns (callers may reuse their buffers at once). */
  writeBatch(writes: KvWrite[]): Promise<void>;
  flushed(): Promise<void>;
  health: WriteHealth;
  /** Measures the disk once, then keeps measuring. */
  startReserve(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenKvOptions {
  path: string;
  /** The store's size limit (lmdb-js grows LMDB's map on demand; Parley refuses writes past this). */
  mapSizeMb?: number;
  /** Disk space kept allocated ahead of the data file (see disk-reserve.ts). */
  diskReserveMb?: number;
  /** Tests: how the reserve allocates (a fake disk). */
  allocate?: Allocate;
}

const MB = 1024 * 1024;
export const DEFAULT_DISK_RESERVE_MB = 32;
export const DEFAULT_MAP_SIZE_MB = 32768;

const DELETE = Symbol('delete');

/**
 * msgpack without records: lmdb-js keeps no shared structures here, so with records msgpackr would write each
 * value's record definitions inline and rebuild them on every encode. Plain maps are ~30% cheaper to encode and
 * decode and no larger. Values written with inline records (before this option) are self-describing and decode.
 */
const tableOptions = (name: string): DatabaseOptions & { name: string; useRecords: boolean } => ({ name, encoding: 'msgpack', useRecords: false });

const inBounds = (key: Key, o: RangeOptions) => {
  const [low, high] = o.reverse ? [o.end, o.start] : [o.start, o.end];
  // Forward: start inclusive, end exclusive; reverse: start (the high end) inclusive, end (the low end) exclusive.
  if (low !== undefined && (o.reverse ? compareKeys(key, low) <= 0 : compareKeys(key, low) < 0)) return false;
  if (high !== undefined && (o.reverse ? compareKeys(key, high) > 0 : compareKeys(key, high) >= 0)) return false;
  return true;
};

/** A range read inside a transaction: committed entries with the transaction's own writes laid over them, in key order. */
function* withBuffered<V>(
  committed: Iterable<{ key: Key; value: V }>,
  writes: { key: Key; value: unknown }[],
  o: RangeOptions,
): Generator<{ key: Key; value: V }> {
  const dir = o.reverse ? -1 : 1;
  const own = writes.filter((w) => inBounds(w.key, o)).sort((a, b) => dir * compareKeys(a.key, b.key));
  let i = 0;
  let yielded = 0;
  const limit = o.limit ?? Infinity;
  const emit = function* (entry: { key: Key; value: unknown }) {
    if (entry.value === DELETE || yielded >= limit) return;
    yielded++;
    yield entry as { key: Key; value: V };
  };
  for (const entry of committed) {
    if (yielded >= limit) return;
    while (i < own.length && dir * compareKeys(own[i].key, entry.key) < 0) yield* emit(own[i++]);
    if (i < own.length && compareKeys(own[i].key, entry.key) === 0) yield* emit(own[i++]);
    else yield* emit(entry);
  }
  while (i < own.length) yield* emit(own[i++]);
}

export function openKv(options: OpenKvOptions): Kv {
  checkLmdbDataFile(options.path);
  const limitBytes = (options.mapSizeMb ?? DEFAULT_MAP_SIZE_MB) * MB;
  const root: RootDatabase = open({
    path: options.path,
    // Only where lmdb-js starts: it grows the map on demand. The limit is enforced by the disk reserve.
    mapSize: Math.min(limitBytes, 64 * MB),
    maxDbs: 32,
  });
  const dbs = new Map<TableName, Database<unknown, Key>>();
  for (const name of TABLES) dbs.set(name, root.openDB<unknown, Key>(tableOptions(name)));
  const db = (name: TableName) => {
    const d = dbs.get(name);
    if (!d) throw new Error(`unknown table ${name}`);
    return d;
  };

  const health = createWriteHealth();
  const reserveBytes = (options.diskReserveMb ?? DEFAULT_DISK_RESERVE_MB) * MB;
  const reserve: DiskReserve = createDiskReserve({
    file: join(options.path, 'data.mdb'),
    usedBytes: () => {
      const stats = root.getStats() as { lastPageNumber: number; pageSize: number };
      return (stats.lastPageNumber + 1) * stats.pageSize;
    },
    reserveBytes,
    minFreeBytes: Math.max(256 * 1024, Math.floor(reserveBytes / 4)),
    limitBytes,
    allocate: options.allocate,
    onChange: (state) => {
      if (!state.ok) health.failed(new StoreUnavailableError(state.code, state.message));
      // Space is back: one small write proves the store writes again, which also tells every waiting feature.
      else void commit(() => db('meta').put('writeProbe', Date.now())).catch(() => undefined);
    },
  });

  let closed = false;
  // Reads after close() began would open a new shared read transaction that lmdb-js resets on a timer, which
  // throws out of the event loop once the environment is closed.
  const assertOpen = () => {
    if (closed) throw new StoreUnavailableError('closed', 'the store is closed');
  };

  /**
   * Every write goes through here: refused before it reaches LMDB when the reserve says the disk (or the size
   * limit) is near; a commit's outcome keeps the health current. Resolves once durable (committed and flushed:
   * lmdb-js resolves at commit and fsyncs just after with overlappingSync, and an acknowledgement must survive a
   * power loss too; measured here: 54k → 36k transactions/s with 32 writers, p50 0.43 → 0.53 ms).
   */
  async function commit<T>(write: () => Promise<T>): Promise<T> {
    assertOpen();
    const state = reserve.state();
    if (!state.ok) {
      const err = new StoreUnavailableError(state.code, `the store cannot write: ${state.message}`);
      health.failed(err);
      throw err;
    }
    try {
      const result = await write();
      await root.flushed;
      health.succeeded();
      return result;
    } catch (raw) {
      const err = await classifyCommitFailure(raw);
      health.failed(err);
      throw err;
    }
  }

  const read: KvRead = {
    get: <V>(table: TableName, key: Key) => {
      assertOpen();
      return db(table).get(key) as V | undefined;
    },
    range: <V>(table: TableName, o: RangeOptions = {}) => {
      assertOpen();
      return db(table).getRange(o) as Iterable<{ key: Key; value: V }>;
    },
    count: (table: TableName, o: RangeOptions = {}) => {
      assertOpen();
      return db(table).getKeysCount(o);
    },
  };

  const transaction = async <T>(fn: (tx: KvScope) => Promise<T>): Promise<T> => {
    // A callback that throws is the caller's error, not the store's: it is handed back after the (empty) commit and
    // does not count as a failing write.
    let thrown: { error: unknown } | undefined;
    const settled: ((committed: boolean) => void)[] = [];
    const runSettled = (committed: boolean) => {
      for (const f of settled.splice(0)) f(committed);
    };
    const result = await commit(() =>
      root.transaction(async () => {
        const writes = new Map<string, { table: TableName; key: Key; value: unknown }>();
        const reads = new Map<string, unknown>();
        const bufferKey = (table: TableName, key: Key) => `${table}\u0000${JSON.stringify(key)}`;
        let open = true;
        const buffered = (table: TableName) => [...writes.values()].filter((w) => w.table === table);
        const range = <V>(table: TableName, o: RangeOptions = {}) =>
          buffered(table).length === 0
            ? read.range<V>(table, o)
            : withBuffered<V>(read.range<V>(table, { start: o.start, end: o.end, reverse: o.reverse }), buffered(table), o);
        const tx: KvScope = {
          get: <V>(table: TableName, key: Key) => {
            const k = bufferKey(table, key);
            const w = writes.get(k);
            if (w) return w.value === DELETE ? undefined : (w.value as V);
            // Nothing else writes while this transaction holds the lock: a record read twice (a conversation's, by
            // the host and by its repository) is decoded once.
            if (reads.has(k)) return reads.get(k) as V;
            const value = read.get<V>(table, key);
            reads.set(k, value);
            return value;
          },
          range,
          count: (table, o = {}) => {
            if (buffered(table).length === 0) return read.count(table, o);
            let n = 0;
            for (const _ of range(table, o)) n++;
            return n;
          },
          put: async (table, key, value) => {
            if (!open) throw new Error('a write after its transaction ended');
            db(table); // an unknown table throws here
            writes.set(bufferKey(table, key), { table, key, value });
          },
          remove: async (table, key) => {
            if (!open) throw new Error('a write after its transaction ended');
            writes.set(bufferKey(table, key), { table, key, value: DELETE });
          },
          atomically: (f) => f(tx),
          inTransaction: true,
          afterSettled: (f) => void settled.push(f),
        };
        try {
          const value = await fn(tx);
          // Inside lmdb-js's write transaction these apply synchronously. Their promises settle with the commit: when
          // it fails, each rejects with "Commit failed" as the transaction's own does, which carries (and classifies)
          // that failure; left unhandled, they were unhandled rejections logged at error level with a stack.
          for (const w of writes.values()) {
            if (w.value === DELETE)
              db(w.table)
                .remove(w.key)
                .catch(() => undefined);
            else
              db(w.table)
                .put(w.key, w.value)
                .catch(() => undefined);
          }
          return value;
        } catch (error) {
          thrown = { error };
          return undefined;
        } finally {
          open = false;
        }
      }),
    ).then(
      (value) => (runSettled(!thrown), value),
      (err: unknown) => {
        runSettled(false);
        throw err;
      },
    );
    if (thrown) throw thrown.error;
    return result as T;
  };

  const direct: KvScope = {
    get: read.get,
    range: read.range,
    count: read.count,
    put: (table, key, value) => commit(() => db(table).put(key, value)).then(() => undefined),
    remove: (table, key) => commit(() => db(table).remove(key)).then(() => undefined),
    atomically: (fn) => transaction(fn),
    inTransaction: false,
    afterSettled: (fn) => fn(true),
  };

  /** The puts of a write-thread block (no main-thread transaction), checked before anything is queued. */
  const writeBlock = (writes: KvWrite[]) => {
    assertOpen();
    for (const w of writes) db(w.table); // an unknown table throws here, before anything is queued
    return () => {
      // Each put's own promise rejects too when the commit fails; the block's promise carries that failure.
      for (const w of writes)
        db(w.table)
          .put(w.key, w.value)
          .catch(() => undefined);
    };
  };

  return {
    get: read.get,
    range: read.range,
    count: read.count,
    path: options.path,
    direct,
    transaction,
    insertIfAbsent: (guard, writes) => {
      const block = writeBlock(writes);
      return commit(() => db(guard.table).ifNoExists(guard.key, block));
    },
    writeBatch: async (writes) => {
      const block = writeBlock(writes);
      if (writes.length === 0) return;
      await commit(() => root.batch(block));
    },
    flushed: async () => {
      await root.flushed;
    },
    health,
    async startReserve() {
      await reserve.check();
      reserve.start();
    },
    async close() {
      if (closed) return;
      closed = true;
      reserve.stop();
      await root.flushed;
      // lmdb-js resets its shared read transaction on a setTimeout(0) after reads: let a pending reset run first.
      await new Promise((resolve) => setTimeout(resolve, 0));
      await root.close();
    },
  };
}
