// What an agent does in the inbox: claim (a compare-and-set in the store: the second agent is told who has it),
// assign to another agent, reply (under the agent's name; a conversation nobody holds is claimed by the reply), leave
// an internal note (stored apart from the conversation: never sent to the customer, never read by the model), tell the
// customer's widget the agent is typing, release to the assistant, resolve. Each change is announced on the live feed.
import { randomUUID } from 'node:crypto';
import type { WidgetAgentTypingFrame } from '../../sdk/src/widget-protocol.ts';
import type { Clock } from '../clock.ts';
import { conversationIdFor } from '../conversations/history.ts';
import type { ConversationHost, HandoffResult } from '../conversations/host.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import { HttpError } from '../http/errors.ts';
import { isVerifiedCustomer, type ConversationSummary, type InboxAgent } from '../store/model.ts';
import { transcriptOf } from './transcript.ts';
import { customerRef, holderOf, itemsOf, type ViewDeps } from './views.ts';
import type { ConversationWhole, InboxEventKind } from './wire.ts';

/** How many history records a conversation shows at most (its latest). */
const TRANSCRIPT_RECORDS = 500;

export interface Actor extends InboxAgent {
  role: 'agent' | 'admin';
}

export interface InboxServiceDeps extends ViewDeps {
  clock: Clock;
  host: ConversationHost;
  customers: CustomerRepo;
  /** Announces a change to every open inbox (every node). */
  announce: (kind: InboxEventKind, conversationId: string, agent?: InboxAgent) => void;
  /** Pushes a frame to the customer's open widgets (every node). */
  pushToWidget: (customerId: string, frame: WidgetAgentTypingFrame) => void;
}

const notFound = () => new HttpError('conversation_not_found', 'No conversation with this id');
const notHandedOff = () => new HttpError('not_handed_off', 'A person does not have this conversation: nobody asked for one');
export const heldBy = (holder: InboxAgent) =>
  new HttpError('claimed_by_other', `${holder.name} has this conversation`, {}, { holder: { agentId: holder.agentId, name: holder.name } });

const refused = (r: Extract<HandoffResult, { ok: false }>) => (r.code === 'not_found' ? notFound() : notHandedOff());
const ref = (a: Actor): InboxAgent => ({ agentId: a.agentId, name: a.name });

export function createInboxService(d: InboxServiceDeps) {
  const { store, clock } = d;
  const summary = async (conversationId: string): Promise<ConversationSummary> => {
    const c = await store.conversations.get(conversationId);
    if (!c) throw notFound();
    const { snapshot: _, ...rest } = c;
    return rest;
  };
  const handedOff = async (conversationId: string) => {
    const c = await summary(conversationId);
    if (!c.handoff) throw notHandedOff();
    return c as ConversationSummary & { handoff: NonNullable<ConversationSummary['handoff']> };
  };
  /** The conversation's holder must be `a` (or nobody; admins may act on anyone's). */
  const mayAct = async (a: Actor, c: ConversationSummary) => {
    const holder = holderOf(c, await store.agentInbox.thread(c.conversationId));
    if (holder && holder.agentId !== a.agentId && a.role !== 'admin') throw heldBy(holder);
    return holder;
  };

  const claim = async (a: Actor, conversationId: string) => {
    const c = await handedOff(conversationId);
    const r = await store.agentInbox.claim(conversationId, c.handoff.since, ref(a), clock.now(), [a.agentId]);
    if (!r.ok) throw heldBy(r.holder);
    d.announce('claimed', conversationId, ref(a));
    return r.thread;
  };

  return {
    claim,

    async assign(a: Actor, conversationId: string, to: InboxAgent) {
      const c = await handedOff(conversationId);
      const holder = await mayAct(a, c);
      const r = await store.agentInbox.claim(conversationId, c.handoff.since, to, clock.now(), holder ? [holder.agentId] : []);
      if (!r.ok) throw heldBy(r.holder);
      d.announce('assigned', conversationId, to);
      return r.thread;
    },

    async reply(a: Actor, conversationId: string, text: string, id: string | undefined) {
      const c = await handedOff(conversationId);
      const holder = await mayAct(a, c);
      if (!holder) await claim(a, conversationId);
      const messageId = `agent_${id ?? randomUUID()}`;
      const r = await d.host.agentMessage(conversationId, { id: messageId, text, author: { name: a.name, agentId: a.agentId } });
      if (!r.ok) throw refused(r);
      if (c.channel === 'web') d.pushToWidget(c.customerId, { type: 'agent_typing', on: false, agent: { name: a.name } });
      await store.agentInbox.markRead(a.agentId, conversationId, clock.now());
      return { id: messageId, conversationId, at: clock.now() };
    },

    async note(a: Actor, conversationId: string, text: string) {
      await summary(conversationId);
      const note = { id: `note_${randomUUID()}`, conversationId, author: ref(a), text, at: clock.now() };
      await store.agentInbox.addNote(note);
      d.announce('note', conversationId, ref(a));
      return note;
    },

    async typing(a: Actor, conversationId: string, on: boolean) {
      const c = await handedOff(conversationId);
      await mayAct(a, c);
      if (c.channel !== 'web') return false;
      d.pushToWidget(c.customerId, { type: 'agent_typing', on, agent: { name: a.name } });
      return true;
    },

    /**
     * Back to the assistant (the customer is told); `resolve`: and recorded as resolved by this agent, in the
     * conversation's history (the release says so, or a record of its own when no person had it) and in the inbox's
     * thread (the Resolved view).
     */
    async close(a: Actor, conversationId: string, resolve: boolean) {
      const c = await summary(conversationId);
      if (!c.handoff && !resolve) throw notHandedOff();
      await mayAct(a, c);
      const r = resolve ? await d.host.resolve(conversationId, ref(a)) : await d.host.release(conversationId, a.agentId);
      if (!r.ok && r.code === 'not_found') throw notFound();
      const thread = await store.agentInbox.close(conversationId, c.handoff?.since ?? 0, clock.now(), resolve ? ref(a) : undefined);
      d.announce(resolve ? 'resolved' : 'released', conversationId, ref(a));
      return thread;
    },

    async read(a: Actor, conversationId: string) {
      await store.agentInbox.markRead(a.agentId, conversationId, clock.now());
    },

    async whole(a: Actor, conversationId: string): Promise<ConversationWhole> {
      const c = await summary(conversationId);
      const otherIds = (['web', 'whatsapp'] as const).map((ch) => conversationIdFor(c.customerId, ch)).filter((id) => id !== conversationId);
      // Independent reads, side by side rather than one after another.
      const [[item], page, notes, thread, customer, otherSummaries] = await Promise.all([
        itemsOf(d, a.agentId, [c]),
        store.history.page(conversationId, { limit: TRANSCRIPT_RECORDS }),
        store.agentInbox.notes(conversationId),
        store.agentInbox.thread(conversationId),
        d.customers.get(c.customerId),
        store.conversations.summaries({ ids: otherIds, limit: 2 }),
      ]);
      const transcript = transcriptOf(
        page.map((p) => p.record),
        notes,
        thread,
      );
      const others = otherSummaries.map((o) =>
        o.lastMessageAt === undefined
          ? { conversationId: o.conversationId, channel: o.channel, state: o.state }
          : { conversationId: o.conversationId, channel: o.channel, state: o.state, lastMessageAt: o.lastMessageAt },
      );
      const channels = new Set<'web' | 'whatsapp'>([c.channel, ...others.map((o) => o.channel)]);
      if (customer?.phone) channels.add('whatsapp');
      return {
        item,
        transcript,
        customer: Object.assign(customerRef(c, customer), { verified: isVerifiedCustomer(c), channels: [...channels], others }),
        typingIndicator: c.channel === 'web',
      };
    },
  };
}

export type InboxService = ReturnType<typeof createInboxService>;
