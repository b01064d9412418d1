// The storage interface every feature uses. LMDB serves it today; another
// engine (PostgreSQL, Redis) can serve it later without touching callers.
//
// Reads are synchronous (LMDB reads are memory-mapped). Writes return a
// promise that resolves once the write is durable. `transaction` runs its
// callback inside one write transaction: reads inside it see the latest
// committed state and no other writer interleaves — use it for every check
// that must not race (dedup, caps, single-use tokens, job claims).

export type Key = string | number | (string | number)[];

export interface RangeOptions {
  start?: Key;
  end?: Key;
  reverse?: boolean;
  limit?: number;
}

export interface Table<V> {
  get(key: Key): V | undefined;
  put(key: Key, value: V): Promise<void>;
  remove(key: Key): Promise<void>;
  range(options?: RangeOptions): Iterable<{ key: Key; value: V }>;
  count(options?: RangeOptions): number;
  /**
   * Only inside `store.transaction`: writes join the transaction and are applied when its callback
   * returns (nothing is written if it throws). `get` inside the callback sees them; `range` does not.
   */
  putInTx(key: Key, value: V): void;
  removeInTx(key: Key): void;
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
] as const;
export type TableName = (typeof TABLES)[number];

export interface StoreWrite {
  table: TableName;
  key: Key;
  value: unknown;
}

export interface StoreChecks {
  database: 'ok' | string;
  migrations: 'ok' | string;
}

export interface Store {
  table<V>(name: TableName): Table<V>;
  /** Run `fn` inside one write transaction; resolves with its result once durable. */
  transaction<T>(fn: () => T): Promise<T>;
  checks(): StoreChecks;
  schemaVersion(): number;
  /**
   * Applies `writes` atomically, and only if `guard` is absent (checked inside the commit);
   * resolves with whether they were applied, once durable. Unlike `transaction`, nothing runs on
   * the caller's thread inside the commit, so many of these share one commit cheaply: use it for
   * insert-once writes on hot paths (de-dup records, idempotent enqueues).
   */
  insertIfAbsent(guard: { table: TableName; key: Key }, writes: StoreWrite[]): Promise<boolean>;
  /**
   * Applies `writes` atomically in one commit, with no reads or conditions; resolves once durable.
   * Nothing runs on the caller's thread inside the commit: for write-only batches (telemetry).
   * The values are encoded before it returns, so the caller may reuse their buffers at once.
   */
  writeBatch(writes: StoreWrite[]): Promise<void>;
  /** Resolves when every write so far is on disk. */
  flushed(): Promise<void>;
  /** Called when writes work again after failing (the disk has room again, the database is back). */
  onRecovered(listener: () => void): () => void;
  close(): Promise<void>;
  readonly path: string;
}
