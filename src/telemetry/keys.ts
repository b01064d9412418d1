// Key layout of the `telemetry` and `turnCalls` tables (see SEGMENTS.md beside this file).
//  - segments: `<smallest id>` → one flush's records, sorted by id, encoded together (segment.ts).
//    Record ids are `<13-digit ms>-<8-digit seq>`, so segment keys sort by time. Every record of a
//    segment is less than SEGMENT_SPAN_MS newer than its key: a reader knows where to start and stop.
//    Older databases hold one record per key (a one-record segment, read the same way).
//  - pending references: `}<flush id>` → [conversationId, segment key, byte offsets][] written with
//    each flush (one sequential key, not one per conversation); compacted every few seconds into
//  - the conversation index: `~<conversationId>\0<smallest segment key>` → [segment key, ...offsets][].
//    (Older databases hold `~<conversationId>\0<id>` → ids: one-record references.)
// `:` sorts after every digit, `}` after `:`, `~` after `}`: each kind has its own key range.

/** Sortable id: 13-digit ms timestamp, then a sequence. */
export function timeOrderedId(at: number, seq: number): string {
  // 13 digits of ms cover years 2001–2286 without padding; pad only the sequence.
  const ms = Math.max(0, Math.floor(at));
  return `${ms >= 1e12 ? ms : String(ms).padStart(13, '0')}-${String(seq % 1e8).padStart(8, '0')}`;
}

/** The first possible key at or after `at` (ms). */
export const keyAt = (at: number) => `${String(Math.max(0, Math.floor(at))).padStart(13, '0')}-`;

/** The ms part of an id or segment key. */
export const msOf = (id: string) => Number(id.slice(0, id.indexOf('-')));

/** Upper bound (exclusive) of the segment keys: after every digit, before the other prefixes. */
export const RECORDS_END = ':';

/** A segment holds records less than this much newer than its first one; a flush splits where needed. */
export const SEGMENT_SPAN_MS = 60_000;

export const PENDING_START = '}';
export const PENDING_END = '~';
export const pendingRefsKey = (flushId: string) => `${PENDING_START}${flushId}`;

const INDEX = '~';
export const conversationIndexKey = (conversationId: string, segmentKey: string) => `${INDEX}${conversationId}\u0000${segmentKey}`;
export const conversationIndexPrefix = (conversationId: string) => `${INDEX}${conversationId}\u0000`;
/** Just past every index key of this conversation. */
export const conversationIndexEnd = (conversationId: string) => `${INDEX}${conversationId}\u0001`;
