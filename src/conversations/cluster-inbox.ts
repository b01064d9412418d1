// The cluster's side of the host (issue 17): an event for a conversation another live node owns is stored in that
// node's inbox (durable before it is acknowledged) and the owner woken; the owner applies its inbox entries to its
// actor, each removed in the write that stores what it carried. A conversation whose owner is gone is adopted: claimed,
// resumed, its inbox applied.
import { isKnownMessage } from '../../machines/conversation.ts';
import type { ConversationMeta, ConversationRecord } from '../store/model.ts';
import type { InboxEntry, InboxEvent } from '../store/repos.ts';
import { HeldElsewhere, type Active, type Runtime } from './runtime.ts';

/** Runs `step` after the steps of the messages that reached this conversation before it (host.ts `inArrivalOrder`). */
export type InArrivalOrder = <T>(conversationId: string, step: () => Promise<T>) => Promise<T>;

export const metaOfRecord = (r: ConversationRecord): ConversationMeta => ({
  conversationId: r.conversationId,
  customerId: r.customerId,
  externalId: r.externalId,
  channel: r.channel,
});

/**
 * The one check of whether the conversation already has this customer message: the actor remembers the ids of the
 * messages it queued (not durable yet, perhaps), the store every one it committed. The write checks again under the
 * conversation's lock (`conversations.persist`), where the store is the authority.
 */
export async function knownMessage(rt: Runtime, conversationId: string, messageId: string, a: Active | undefined): Promise<'queued' | 'stored' | false> {
  if (a && isKnownMessage(a.actor.getSnapshot().context, messageId)) return 'queued';
  return (await rt.deps.services.store.history.seen(conversationId, messageId)) ? 'stored' : false;
}

/** Stores the event for the conversation's owner (durable when this resolves), then wakes the owner. */
export async function toInbox(rt: Runtime, owner: string, conversationId: string, event: InboxEvent): Promise<void> {
  const { store, clock } = rt.deps.services;
  await store.inbox.post(conversationId, event, clock.now());
  // Only a wake-up: an owner that misses it (or dies) still finds the entry (bus resync, takeover sweep).
  void rt.deps.cluster?.notifyOwner(owner, conversationId).catch((err: unknown) => rt.log.debug({ err }, 'inbox notice not sent'));
}

/** The stored conversation's actor here, or, when another live node owns it, `remote(owner, record)`. */
export async function onOwner<T>(
  rt: Runtime,
  conversationId: string,
  local: (a: Active) => Promise<T>,
  remote: (owner: string, record: ConversationRecord) => Promise<T>,
  missing: T,
): Promise<T> {
  const live = rt.active.get(conversationId);
  if (live && !live.writes.final) return local(live);
  const record = await rt.deps.services.store.conversations.get(conversationId);
  if (!record) return missing;
  let a: Active;
  try {
    a = await rt.activate(metaOfRecord(record));
  } catch (err) {
    if (err instanceof HeldElsewhere) return remote(err.owner, record);
    throw err;
  }
  a.lastActiveAt = rt.deps.services.clock.now();
  return local(a);
}

/** Applies one inbox entry to the conversation's actor (this node owns it); the entry is removed with the write. */
export async function applyEntry(rt: Runtime, a: Active, { id, event }: InboxEntry): Promise<void> {
  const { store, clock } = rt.deps.services;
  const conversationId = a.meta.conversationId;
  const value = a.actor.getSnapshot().value;
  const at = clock.now();
  const taken = () => {
    a.writes.inboxEntryDone(id);
    void a.writes.requestWrite().catch(() => undefined);
  };
  switch (event.type) {
    case 'customer': {
      const { messageId, text, content } = event.message;
      if (await knownMessage(rt, conversationId, messageId, a)) return taken();
      a.lastActiveAt = at;
      a.writes.add({ o: { type: 'customer', messageId, text, content }, at, inboxId: id });
      void a.writes.requestWrite().catch(() => undefined);
      a.actor.send({ type: 'customer.message', at, messageId, text });
      return;
    }
    case 'confirm': {
      const pending = (await store.conversations.get(conversationId))?.pendingConfirmation;
      taken();
      if (pending?.id === event.confirmationId) a.actor.send({ type: 'customer.confirm', at, confirmationId: event.confirmationId, approve: event.approve });
      return;
    }
    case 'handoff':
      taken();
      if (value !== 'withHuman')
        a.actor.send({
          type: 'handoff.request',
          at,
          ...(event.reason === undefined ? {} : { reason: event.reason }),
          ...(event.agentId === undefined ? {} : { agentId: event.agentId }),
        });
      return;
    case 'release':
      taken();
      if (value === 'withHuman')
        a.actor.send(
          Object.assign({ type: 'handoff.release' as const, at, by: 'agent' as const }, event.agentId === undefined ? {} : { agentId: event.agentId }),
        );
      return;
    case 'resolve':
      taken();
      a.actor.send({ type: 'resolve', at, by: event.by });
      return;
    case 'agent':
      taken();
      if (value === 'withHuman') a.actor.send({ type: 'agent.message', at, id: event.message.id, text: event.message.text, author: event.message.author });
      return;
  }
}

/** Applies the conversation's inbox entries, claiming the conversation when nobody live owns it. */
export function drainInbox(rt: Runtime, inArrivalOrder: InArrivalOrder, conversationId: string): Promise<void> {
  return inArrivalOrder(conversationId, async () => {
    const { store } = rt.deps.services;
    const entries = await store.inbox.list(conversationId);
    if (!entries.length) return;
    const record = await store.conversations.get(conversationId);
    const first = entries.find((e) => e.event.type === 'customer')?.event;
    const meta = record
      ? metaOfRecord(record)
      : first?.type === 'customer'
        ? { conversationId, customerId: first.customerId, externalId: first.externalId, channel: first.channel }
        : undefined;
    if (!meta) return void rt.log.warn({ conversationId, entries: entries.length }, 'inbox entries for a conversation that does not exist');
    let a: Active;
    try {
      a = await rt.activate(meta);
    } catch (err) {
      // Its owner is another live node: make sure that one looks.
      if (err instanceof HeldElsewhere) return void rt.deps.cluster?.notifyOwner(err.owner, conversationId).catch(() => undefined);
      throw err;
    }
    // Taken entries that this list no longer holds were removed before it was read: forgotten now, and only now (a
    // list read before their removal committed still holds them, and must not apply them again).
    const listed = new Set(entries.map((e) => e.id));
    for (const id of a.inboxTaken) if (!listed.has(id)) a.inboxTaken.delete(id);
    for (const entry of entries) {
      if (a.inboxTaken.has(entry.id) || a.writes.final) continue;
      a.inboxTaken.add(entry.id);
      await applyEntry(rt, a, entry);
    }
  });
}

/** Takes over a conversation whose owner is gone: claims it, resumes its turn or timers, applies its inbox. */
export async function adopt(rt: Runtime, inArrivalOrder: InArrivalOrder, conversationId: string): Promise<boolean> {
  const record = await rt.deps.services.store.conversations.get(conversationId);
  if (record && !rt.active.has(conversationId)) {
    try {
      await rt.activate(metaOfRecord(record));
    } catch (err) {
      if (err instanceof HeldElsewhere) return false;
      throw err;
    }
  }
  await drainInbox(rt, inArrivalOrder, conversationId);
  return true;
}
