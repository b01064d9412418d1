// Telemetry written before the conversation index existed has no index keys:
// add them once, in the background, in batches (idempotent; a marker records it is done).
import type { Logger } from '../../../logger.ts';
import type { Kv } from '../kv.ts';
import { conversationIndexKey, RECORDS_END } from './keys.ts';

/** Sorts after every record key and before every index key. */
export const INDEX_MARKER = ':conversation-index-v1';
const BATCH = 5000;

export async function backfillConversationIndex(kv: Kv, logger: Logger): Promise<number> {
  let added = 0;
  for (const name of ['telemetry', 'turnCalls'] as const) {
    if (kv.get(name, INDEX_MARKER) === true) continue;
    let start = '';
    for (;;) {
      const byConversation = new Map<string, string[]>();
      let last: string | undefined;
      let count = 0;
      for (const { key, value } of kv.range<{ id: string; conversationId?: string } | string[] | boolean>(name, { start, end: RECORDS_END, limit: BATCH })) {
        last = key as string;
        const c = typeof value === 'object' && !Array.isArray(value) ? value.conversationId : undefined;
        if (c === undefined) continue;
        count++;
        const ids = byConversation.get(c);
        if (ids) ids.push(last);
        else byConversation.set(c, [last]);
      }
      if (last === undefined) break;
      // Keys come in order: each list is sorted, its first id the smallest.
      await kv.transaction(async (tx) => {
        for (const [c, ids] of byConversation) await tx.put(name, conversationIndexKey(c, ids[0]), ids);
      });
      added += count;
      start = `${last}\u0000`;
    }
    await kv.direct.put(name, INDEX_MARKER, true);
  }
  if (added) logger.info({ added }, 'telemetry conversation index backfilled');
  return added;
}
