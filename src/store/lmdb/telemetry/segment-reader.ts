// Reads records back in id order across segments. Segments are keyed by their
// smallest id and may overlap (a producer may give an `at` in the past), but none
// spans SEGMENT_SPAN_MS: so going up, every record below the next segment's key is
// final; going down, every record at or above `next key + span` is.
import type { Key, KvRead, RangeOptions } from '../kv.ts';
import type { Codecs, RecordCodec } from './codec.ts';
import { conversationIndexRange, keyAt, legacyConversationIndexRange, msOf, PENDING_END, PENDING_START, RECORDS_END, SEGMENT_SPAN_MS } from './keys.ts';
import { recordsOf } from './segment.ts';

export type TelemetryTable = keyof Codecs;

/** One telemetry table of the environment, read as a table. */
export const tableView = (kv: KvRead, table: TelemetryTable) => ({
  get: (key: Key) => kv.get<unknown>(table, key),
  range: (o: RangeOptions) => kv.range<unknown>(table, o),
});

export interface Bounds {
  /** Inclusive. */
  lower?: string;
  /** Exclusive. */
  upper?: string;
  reverse?: boolean;
}

interface Source<T> {
  key: string;
  records(): T[];
}

function mergeSorted<T extends { id: string }>(a: T[], b: T[], reverse: boolean): T[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(reverse ? (a[i].id > b[j].id ? a[i++] : b[j++]) : a[i].id < b[j].id ? a[i++] : b[j++]);
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}

/** Yields the records of `sources` (in key order, descending if `reverse`) inside the bounds, in id order. */
export function* inIdOrder<T extends { id: string }>(sources: Iterable<Source<T>>, b: Bounds): Generator<T> {
  const lower = b.lower || undefined;
  const upper = b.upper;
  const reverse = b.reverse === true;
  const inBounds = (r: T) => (lower === undefined || r.id >= lower) && (upper === undefined || r.id < upper);
  let buffered: T[] = [];
  let next = 0;
  for (const s of sources) {
    if (!reverse) {
      if (upper !== undefined && s.key >= upper) break;
      while (next < buffered.length && buffered[next].id < s.key) yield buffered[next++];
    } else {
      if (upper !== undefined && s.key >= upper) continue;
      const ceiling = keyAt(msOf(s.key) + SEGMENT_SPAN_MS); // this source and every later one hold only ids below this
      while (next < buffered.length && buffered[next].id >= ceiling) yield buffered[next++];
      if (lower !== undefined && ceiling <= lower) break;
    }
    const records = s.records().filter(inBounds);
    if (reverse) records.reverse();
    buffered = mergeSorted(buffered.slice(next), records, reverse);
    next = 0;
  }
  while (next < buffered.length) yield buffered[next++];
}

/** Every record of `table` inside the bounds, in id order. */
export function readRange<T extends { id: string }>(store: KvRead, table: TelemetryTable, codec: RecordCodec<T>, b: Bounds = {}): Generator<T> {
  const t = tableView(store, table);
  // A segment starting up to one span before `lower` may still hold records at or after it.
  const from = b.lower ? keyAt(msOf(b.lower) - SEGMENT_SPAN_MS) : '';
  const to = b.upper !== undefined && b.upper < RECORDS_END ? b.upper : RECORDS_END;
  const entries = b.reverse ? t.range({ start: to, end: from, reverse: true }) : t.range({ start: from, end: to });
  function* sources(): Generator<Source<T>> {
    for (const { key, value } of entries) yield { key: key as string, records: () => recordsOf(value, codec) };
  }
  return inIdOrder(sources(), b);
}

/** Where one conversation's records are: segment key → byte offsets (undefined: the whole one-record legacy value). */
export function conversationRefs(store: KvRead, table: TelemetryTable, conversationId: string, upper?: string): Map<string, number[] | undefined> {
  const t = tableView(store, table);
  const refs = new Map<string, number[] | undefined>();
  const add = (key: string, offsets: number[] | undefined) => {
    const had = refs.get(key);
    refs.set(key, had && offsets ? [...new Set([...had, ...offsets])].sort((x, y) => x - y) : offsets);
  };
  // An entry is keyed by its smallest segment key: entries past `upper` hold nothing below it.
  const legacy = legacyConversationIndexRange(conversationId, upper);
  for (const range of legacy ? [conversationIndexRange(conversationId, upper), legacy] : [conversationIndexRange(conversationId, upper)]) {
    for (const { value } of t.range(range)) {
      if (!Array.isArray(value)) continue;
      for (const ref of value) {
        if (typeof ref === 'string')
          add(ref, undefined); // a legacy entry lists record ids
        else if (Array.isArray(ref)) add(ref[0] as string, ref.slice(1) as number[]);
      }
    }
  }
  for (const { value } of t.range({ start: PENDING_START, end: PENDING_END })) {
    if (!Array.isArray(value)) continue;
    for (const [c, key, offsets] of value as [string, string, number[]][]) if (c === conversationId) add(key, offsets);
  }
  return refs;
}

/** One conversation's records inside the bounds, in id order, read through its index: other records are never decoded. */
export function readConversation<T extends { id: string; conversationId?: string }>(
  store: KvRead,
  table: TelemetryTable,
  codec: RecordCodec<T>,
  conversationId: string,
  b: Bounds = {},
): Generator<T> {
  const t = tableView(store, table);
  const refs = conversationRefs(store, table, conversationId, b.upper);
  const keys = [...refs.keys()].sort();
  if (b.reverse) keys.reverse();
  function* sources(): Generator<Source<T>> {
    for (const key of keys) {
      yield { key, records: () => recordsOf(t.get(key), codec, refs.get(key)).filter((r) => r.conversationId === conversationId) };
    }
  }
  return inIdOrder(sources(), b);
}
