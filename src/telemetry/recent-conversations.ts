// The dashboard's "recent conversations" list, polled every few seconds: found by
// walking the newest telemetry events (bounded), not by reading every conversation.
import type { ConversationRecord } from '../conversations/host.ts';
import type { Store } from '../store/types.ts';
import { eventCodec } from './codec.ts';
import { readRange } from './segment-reader.ts';
import type { TelemetryEvent } from './types.ts';

export type ConversationRow = Omit<ConversationRecord, 'snapshot'>;

const MAX_EVENTS_SCANNED = 20_000;
/** With telemetry persistence off there are no events to walk: read at most this many conversations. */
const MAX_CONVERSATIONS_SCANNED = 2000;

export function recentConversations(store: Store, limit: number): ConversationRow[] {
  const conversations = store.table<ConversationRecord>('conversations');
  const rows: ConversationRow[] = [];
  const seen = new Set<string>();
  const add = (c: ConversationRecord | undefined) => {
    if (!c || seen.has(c.conversationId)) return;
    seen.add(c.conversationId);
    const { snapshot: _, ...rest } = c;
    rows.push(rest);
  };
  let scanned = 0;
  for (const value of readRange<TelemetryEvent>(store, 'telemetry', eventCodec(), { reverse: true })) {
    if (++scanned > MAX_EVENTS_SCANNED) break;
    if (value.conversationId && !seen.has(value.conversationId)) add(conversations.get(value.conversationId));
    if (rows.length >= limit) break;
  }
  if (scanned === 0) for (const { value } of conversations.range({ limit: MAX_CONVERSATIONS_SCANNED })) add(value);
  rows.sort((a, b) => (b.lastMessageAt ?? b.updatedAt) - (a.lastMessageAt ?? a.updatedAt));
  return rows.slice(0, limit);
}
