// Telemetry written before the conversation index existed has no index keys:
// add them once, in the background, in batches (idempotent; a marker records it is done).
import type { Logger } from '../logger.ts';
import type { Store } from '../store/types.ts';
import { conversationIndexKey, RECORDS_END } from './keys.ts';

/** Sorts after every record key and before every index key. */
export const INDEX_MARKER = ':conversation-index-v1';
const BATCH = 5000;

export async function backfillConversationIndex(store: Store, logger: Logger): Promise<number> {
  let added = 0;
  for (const name of ['telemetry', 'turnCalls'] as const) {
    const table = store.table<{ id: string; conversationId?: string } | string | boolean>(name);
    if (table.get(INDEX_MARKER) === true) continue;
    let start = '';
    for (;;) {
      const batch: { key: string; conversationId: string }[] = [];
      let last: string | undefined;
      for (const { key, value } of table.range({ start, end: RECORDS_END, limit: BATCH })) {
        last = key as string;
        if (typeof value === 'object' && value.conversationId !== undefined) batch.push({ key: last, conversationId: value.conversationId });
      }
      if (last === undefined) break;
      await store.transaction(() => batch.forEach((b) => table.putInTx(conversationIndexKey(b.conversationId, b.key), '')));
      added += batch.length;
      start = `${last}\u0000`;
    }
    await table.put(INDEX_MARKER, true);
  }
  if (added) logger.info({ added }, 'telemetry conversation index backfilled');
  return added;
}
