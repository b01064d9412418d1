// The inbox's lists: Waiting for a person (oldest first), Mine, All open (newest handoff first), Resolved (newest
// first); unread counts from each agent's read marks; search by a customer's email, externalId or phone and, when
// `telemetry.store_text` allows, by the words of recent conversations.
import { conversationIdFor } from '../conversations/history.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import type { ConversationSummary, Customer, InboxThread } from '../store/model.ts';
import type { Store } from '../store/repos.ts';
import { normalizePhone } from '../whatsapp/phone.ts';
import type { InboxItem, InboxList } from './wire.ts';

/** How many conversations a list reads at most (a team's open work, not an archive). */
export const LIST_LIMIT = 200;
/** How many records of each candidate conversation a text search reads. */
const TEXT_SEARCH_RECORDS = 200;
const PREVIEW_CHARS = 140;

export interface ViewDeps {
  store: Store;
  customers: CustomerRepo;
  slaMinutes: number;
  textSearch: boolean;
}

/** The agent who holds the conversation's current handoff, if anyone does. */
export function holderOf(c: Pick<ConversationSummary, 'handoff'>, t: InboxThread | undefined) {
  if (!c.handoff || !t || t.resolvedAt !== undefined || t.handoffSince !== c.handoff.since) return undefined;
  return t.holder;
}

async function unreadOf(store: Store, c: ConversationSummary, readAt: number | undefined): Promise<{ unread: number; preview?: string }> {
  if (c.lastCustomerMessageAt === undefined) return { unread: 0 };
  const recent = await store.history.recent(c.conversationId, 50, ['user']);
  const last = recent.at(-1);
  const unread = readAt !== undefined && c.lastCustomerMessageAt <= readAt ? 0 : recent.filter((m) => readAt === undefined || m.at > readAt).length;
  return last ? { unread, preview: last.text.slice(0, PREVIEW_CHARS) } : { unread };
}

export async function itemsOf(d: ViewDeps, agentId: string, summaries: ConversationSummary[]): Promise<InboxItem[]> {
  const ids = summaries.map((c) => c.conversationId);
  const threads = new Map((await d.store.agentInbox.threads(ids)).map((t) => [t.conversationId, t]));
  const marks = await d.store.agentInbox.readMarks(agentId, ids);
  return Promise.all(
    summaries.map(async (c) => {
      const customer = await d.customers.get(c.customerId);
      const t = threads.get(c.conversationId);
      const item: InboxItem = Object.assign(
        { conversationId: c.conversationId, channel: c.channel, state: c.state, customer: customerRef(c, customer) },
        await unreadOf(d.store, c, marks[c.conversationId]),
      );
      if (c.handoff)
        item.handoff =
          c.handoff.reason === undefined
            ? { since: c.handoff.since, source: c.handoff.source }
            : { since: c.handoff.since, source: c.handoff.source, reason: c.handoff.reason };
      const holder = holderOf(c, t);
      if (holder) item.holder = holder;
      if (t?.resolvedAt !== undefined && !c.handoff) Object.assign(item, { resolvedAt: t.resolvedAt, resolvedBy: t.resolvedBy });
      if (c.lastMessageAt !== undefined) item.lastMessageAt = c.lastMessageAt;
      return item;
    }),
  );
}

export function customerRef(c: Pick<ConversationSummary, 'customerId' | 'externalId'>, customer: Customer | undefined): InboxItem['customer'] {
  const ref: InboxItem['customer'] = { customerId: c.customerId, externalId: customer?.externalId ?? c.externalId ?? '' };
  if (customer?.email) ref.email = customer.email;
  if (customer?.phone) ref.phone = customer.phone;
  return ref;
}

/** What a search compares with the words typed: the customer's email, externalId and phone. */
const customerMatches = (c: Customer | undefined, q: string) =>
  !!c && [c.email, c.externalId, c.phone].some((v) => v !== undefined && v.toLowerCase().includes(q));

/**
 * The conversations a search finds: the customer's (exactly by email, externalId or phone; or a part of them among the
 * inbox's and the recent conversations), and with text search, those whose recent messages hold the words.
 */
async function search(d: ViewDeps, q: string, open: ConversationSummary[]): Promise<ConversationSummary[]> {
  const found = new Map<string, ConversationSummary>();
  const phone = normalizePhone(q);
  const exact =
    (q.includes('@') ? await d.customers.findBy('email', q) : undefined) ??
    (await d.customers.findBy('ext', q)) ??
    (phone ? await d.customers.findBy('phone', phone) : undefined);
  if (exact) {
    const ids = (['web', 'whatsapp'] as const).map((ch) => conversationIdFor(exact.customerId, ch));
    for (const c of await d.store.conversations.summaries({ ids, limit: 2 })) found.set(c.conversationId, c);
  }
  const words = q.toLowerCase();
  const resolvedIds = (await d.store.agentInbox.resolved(LIST_LIMIT)).map((t) => t.conversationId);
  const resolved = resolvedIds.length ? await d.store.conversations.summaries({ ids: resolvedIds, limit: LIST_LIMIT }) : [];
  const recent = await d.store.conversations.summaries({ limit: LIST_LIMIT });
  for (const c of [...open, ...resolved, ...recent]) {
    if (found.has(c.conversationId)) continue;
    if (customerMatches(await d.customers.get(c.customerId), words)) found.set(c.conversationId, c);
    else if (d.textSearch) {
      const records = await d.store.history.recent(c.conversationId, TEXT_SEARCH_RECORDS, ['user', 'assistant', 'agent']);
      if (records.some((r) => r.text.toLowerCase().includes(words))) found.set(c.conversationId, c);
    }
  }
  return [...found.values()];
}

export async function listView(d: ViewDeps, agentId: string, view: InboxList['view'], q: string | undefined): Promise<InboxList> {
  const open = await d.store.conversations.withHuman({ limit: LIST_LIMIT });
  const threads = new Map((await d.store.agentInbox.threads(open.map((c) => c.conversationId))).map((t) => [t.conversationId, t]));
  const holder = (c: ConversationSummary) => holderOf(c, threads.get(c.conversationId));
  const waiting = open.filter((c) => !holder(c)).sort((a, b) => a.handoff!.since - b.handoff!.since || (a.conversationId < b.conversationId ? -1 : 1));
  const mine = open.filter((c) => holder(c)?.agentId === agentId);
  let chosen: ConversationSummary[];
  if (q) chosen = await search(d, q, open);
  else if (view === 'waiting') chosen = waiting;
  else if (view === 'mine') chosen = mine;
  else if (view === 'open') chosen = open;
  else {
    const resolved = await d.store.agentInbox.resolved(LIST_LIMIT);
    const byId = new Map(
      (await d.store.conversations.summaries({ ids: resolved.map((t) => t.conversationId), limit: LIST_LIMIT })).map((c) => [c.conversationId, c]),
    );
    // Handed over again since: open, not resolved.
    chosen = resolved.map((t) => byId.get(t.conversationId)).filter((c): c is ConversationSummary => c !== undefined && !c.handoff);
  }
  const items = await itemsOf(d, agentId, chosen);
  const mineItems = view === 'mine' && !q ? items : await itemsOf(d, agentId, mine);
  return {
    view,
    items,
    counts: { waiting: waiting.length, mine: mine.length, open: open.length },
    unreadMine: mineItems.reduce((n, i) => n + i.unread, 0),
    slaMinutes: d.slaMinutes,
    textSearch: d.textSearch,
  };
}
