// Folds the pending references each flush wrote (`}<flush id>`, one sequential key)
// into the conversation index (`~<conversation>\0<segment>`), every few seconds:
// a flush then writes two keys per table, and the index's scattered keys are written
// once per conversation per compaction, not once per flush. Queries read both, so
// nothing waits on this; it is one transaction, so a crash leaves either form whole.
import type { Kv } from '../kv.ts';
import { conversationIndexKey, PENDING_END, PENDING_START } from './keys.ts';
import type { TelemetryTable } from './segment-reader.ts';

/** A flush's references: [conversationId, segment key, byte offsets]. */
export type PendingRefs = [string, string, number[]][];
/** An index entry: [segment key, ...byte offsets][] (a legacy one lists record ids). */
export type IndexEntry = ((string | number)[] | string)[];

export async function compactConversationIndex(kv: Kv, table: TelemetryTable): Promise<number> {
  // Read first: a quiet store has nothing pending and needs no write transaction (nor its flush).
  if (kv.count(table, { start: PENDING_START, end: PENDING_END }) === 0) return 0;
  return kv.transaction(async (t) => {
    const pendingKeys: string[] = [];
    const byConversation = new Map<string, (string | number)[][]>();
    for (const { key, value } of t.range(table, { start: PENDING_START, end: PENDING_END })) {
      pendingKeys.push(key as string);
      if (!Array.isArray(value)) continue;
      for (const [conversationId, segmentKey, offsets] of value as PendingRefs) {
        const refs = byConversation.get(conversationId);
        const ref = [segmentKey, ...offsets];
        if (refs) refs.push(ref);
        else byConversation.set(conversationId, [ref]);
      }
    }
    for (const [conversationId, refs] of byConversation) {
      refs.sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1));
      const key = conversationIndexKey(conversationId, refs[0][0] as string);
      const existing = t.get(table, key);
      await t.put(table, key, Array.isArray(existing) ? [...(existing as IndexEntry), ...refs] : refs);
    }
    for (const key of pendingKeys) await t.remove(table, key);
    return pendingKeys.length;
  });
}
