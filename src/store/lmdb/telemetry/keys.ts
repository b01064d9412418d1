// Key layout of the `telemetry` and `turnCalls` tables (see SEGMENTS.md beside this file).
//  - segments: `<smallest id>` → one flush's records, sorted by id, encoded together (segment.ts).
//    Record ids are `<13-digit ms>-<8-digit seq>`, so segment keys sort by time. Every record of a
//    segment is less than SEGMENT_SPAN_MS newer than its key: a reader knows where to start and stop.
//    Older databases hold one record per key (a one-record segment, read the same way).
//  - pending references: `}<flush id>` → [conversationId, segment key, byte offsets][] written with
//    each flush (one sequential key, not one per conversation); compacted every few seconds into
//  - the conversation index: [`~<conversationId>`, <smallest segment key>] → [segment key, ...offsets][].
//    (Older databases hold `~<conversationId>\0<id>` → ids: one-record references.)
// `:` sorts after every digit, `}` after `:`, `~` after `}`: each kind has its own key range.

export { keyAt, msOf, timeOrderedId } from '../../telemetry-records.ts';

/** Upper bound (exclusive) of the segment keys: after every digit, before the other prefixes. */
export const RECORDS_END = ':';

/** A segment holds records less than this much newer than its first one; a flush splits where needed. */
export const SEGMENT_SPAN_MS = 60_000;

export const PENDING_START = '}';
export const PENDING_END = '~';
export const pendingRefsKey = (flushId: string) => `${PENDING_START}${flushId}`;

const INDEX = '~';

// Index keys are arrays, never one string with a `\0` inside. lmdb-js (ordered-binary) escapes characters ≤ 4 in a
// string key shorter than 64 characters (`\0` becomes the bytes 04 00) but writes longer ones as plain UTF-8 (`\0`
// stays 00): a key `~<id>\0<segment>` of a conversation id of 40 characters or more (real ids are 49) and the
// shorter range start `~<id>\0` were encoded differently, and the range found nothing. An array's parts are
// encoded one by one and joined by a 00 byte, the same way whatever the length.
export const conversationIndexKey = (conversationId: string, segmentKey: string): string[] => [`${INDEX}${conversationId}`, segmentKey];

/** Every index entry of this conversation; with `upper`, only the entries keyed below it (an entry's key is its smallest segment). */
export const conversationIndexRange = (conversationId: string, upper?: string) => ({
  start: [`${INDEX}${conversationId}`],
  end: [`${INDEX}${conversationId}`, upper ?? RECORDS_END],
});

/** `~` + id + `\0` + a 22-character segment key stays under ordered-binary's 64-character threshold below this id length. */
const LEGACY_ESCAPED_BELOW = 40;

/**
 * Where builds before the array keys wrote this conversation's entries as strings `~<id>\0<segment>` (escaped,
 * because shorter than 64 characters); undefined when the id is 40 characters or longer, whose entries those builds
 * wrote unescaped, byte for byte the array key above.
 */
export function legacyConversationIndexRange(conversationId: string, upper?: string): { start: string; end: string } | undefined {
  if (conversationId.length >= LEGACY_ESCAPED_BELOW) return undefined;
  const prefix = `${INDEX}${conversationId}\u0000`;
  return { start: prefix, end: upper !== undefined ? prefix + upper : `${INDEX}${conversationId}\u0001` };
}
