// Telemetry records: the writer the recorder batches into and the queries (src/telemetry/). Part of the store's
// interface (../repos.ts).
import type { TelemetryEvent, TurnCallRecord } from '../telemetry-records.ts';

export type TelemetryKind = 'events' | 'turnCalls';

export interface TelemetryFilter {
  /** `at` from and until, both inclusive, ms. */
  since?: number;
  until?: number;
  /** Exact, or a prefix ending in `.*`; for turn calls it filters `purpose`. */
  type?: string;
  conversationId?: string;
  customerId?: string;
  /** Matches records carrying this external id, or any of `customerIds` (the customer's own ids). */
  customerExternalId?: string;
  customerIds?: string[];
  turnId?: string;
  limit: number;
  /** The last id of the previous page. */
  cursor?: string;
  order: 'asc' | 'desc';
}

export interface TelemetryPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** Where the recorder puts records; the engine decides when they are encoded and how they are batched. */
export interface TelemetryWriter {
  addEvent(e: TelemetryEvent): void;
  addTurnCall(r: TurnCallRecord): void;
  /** Records added and not yet written. */
  pending(): number;
  /** Writes everything added so far in one batch; resolves once durable with how many records it wrote. */
  flush(): Promise<number>;
}

export interface TelemetryStore {
  writer(): TelemetryWriter;
  events(f: TelemetryFilter): Promise<TelemetryPage<TelemetryEvent>>;
  turnCalls(f: TelemetryFilter): Promise<TelemetryPage<TurnCallRecord>>;
  /** Every record with `since <= at <= until`, oldest first, streamed (stop iterating to stop reading). */
  window<K extends TelemetryKind>(kind: K, o: { since: number; until: number }): AsyncIterable<K extends 'events' ? TelemetryEvent : TurnCallRecord>;
  /** Conversation ids of the newest events, newest first, distinct, at most `limit`. */
  recentConversationIds(limit: number): Promise<string[]>;
  /** Deletes records older than `before`; resolves with how many. */
  prune(before: number): Promise<number>;
  /** Background upkeep (LMDB: folding conversation references into the index); no-ops where there is none. */
  start(): void;
  stop(): Promise<void>;
}
