// The dashboard's "recent conversations" list, polled every few seconds: found from the newest telemetry events
// (bounded), not by reading every conversation; with no events (persistence off), the most recently active records.
import type { ConversationSummary } from '../store/model.ts';
import type { Store } from '../store/repos.ts';

export type ConversationRow = ConversationSummary;

export async function recentConversations(store: Store, limit: number): Promise<ConversationRow[]> {
  const ids = await store.telemetry.recentConversationIds(limit);
  const rows = ids.length ? await store.conversations.summaries({ ids, limit }) : await store.conversations.summaries({ limit });
  rows.sort((a, b) => (b.lastMessageAt ?? b.updatedAt) - (a.lastMessageAt ?? a.updatedAt));
  return rows.slice(0, limit);
}
