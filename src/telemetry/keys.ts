// Key layout of the `telemetry` and `turnCalls` tables.
//  - records: `<13-digit ms>-<8-digit seq>` (time-ordered ids);
//  - conversation index: `~<conversationId>\0<smallest id>` → the ids (sorted) of that conversation's records in
//    one write batch: one index key per conversation per batch, not per record. Written in the same
//    transaction as the records. `~` sorts after every digit, so scans bounded by RECORDS_END never see it.

/** Sortable id: 13-digit ms timestamp, then a sequence. */
export function timeOrderedId(at: number, seq: number): string {
  // 13 digits of ms cover years 2001–2286 without padding; pad only the sequence.
  const ms = Math.max(0, Math.floor(at));
  return `${ms >= 1e12 ? ms : String(ms).padStart(13, '0')}-${String(seq % 1e8).padStart(8, '0')}`;
}

/** The first possible key at or after `at` (ms). */
export const keyAt = (at: number) => `${String(Math.max(0, Math.floor(at))).padStart(13, '0')}-`;

/** Upper bound (exclusive) of the record keys: after every digit, before the index prefix. */
export const RECORDS_END = ':';

const INDEX = '~';
export const conversationIndexKey = (conversationId: string, id: string) => `${INDEX}${conversationId}\u0000${id}`;
export const conversationIndexPrefix = (conversationId: string) => `${INDEX}${conversationId}\u0000`;
/** Just past every index key of this conversation. */
export const conversationIndexEnd = (conversationId: string) => `${INDEX}${conversationId}\u0001`;
