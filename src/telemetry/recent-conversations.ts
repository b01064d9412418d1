// The dashboard's "recent conversations" list, polled every few seconds: found from the newest telemetry events
// (bounded), not by reading every conversation; with no events (persistence off), the most recently active records.
// Each row names its customer (email or phone) and, when `telemetry.store_text` is on, the last message's text.
import type { Customer, ConversationSummary } from '../store/model.ts';
import type { Store } from '../store/repos.ts';

export type ConversationRow = ConversationSummary & {
  customer?: { email?: string; phone?: string };
  lastMessage?: { text: string; from: 'customer' | 'assistant' | 'agent'; at: number };
};

const FROM = { 'message.in': 'customer', 'message.out': 'assistant', 'message.agent': 'agent' } as const;

export async function lastMessage(store: Store, conversationId: string): Promise<ConversationRow['lastMessage']> {
  const page = await store.telemetry.events({ conversationId, type: 'message.*', order: 'desc', limit: 1 });
  const e = page.items[0];
  const text = (e?.data as { text?: unknown } | undefined)?.text;
  if (!e || typeof text !== 'string' || !(e.type in FROM)) return undefined;
  return { text: text.length > 200 ? `${text.slice(0, 200)}…` : text, from: FROM[e.type as keyof typeof FROM], at: e.at };
}

export async function recentConversations(
  store: Store,
  limit: number,
  o: { customer?: (customerId: string) => Promise<Customer | undefined>; withText?: boolean; channel?: string } = {},
): Promise<ConversationRow[]> {
  const ids = await store.telemetry.recentConversationIds(limit);
  const rows = ids.length ? await store.conversations.summaries({ ids, limit }) : await store.conversations.summaries({ limit });
  rows.sort((a, b) => (b.lastMessageAt ?? b.updatedAt) - (a.lastMessageAt ?? a.updatedAt));
  const kept = rows.filter((r) => !o.channel || r.channel === o.channel).slice(0, limit);
  return Promise.all(
    kept.map(async (r) => {
      const row: ConversationRow = Object.assign({}, r);
      const c = await o.customer?.(r.customerId);
      if (c && (c.email || c.phone)) row.customer = Object.assign({}, c.email ? { email: c.email } : {}, c.phone ? { phone: c.phone } : {});
      if (o.withText) {
        const last = await lastMessage(store, r.conversationId);
        if (last) row.lastMessage = last;
      }
      return row;
    }),
  );
}
