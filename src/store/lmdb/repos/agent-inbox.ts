// The agent inbox on LMDB: `inboxThreads` conversationId → thread, `inboxNotes` [conversationId, at, id] → note,
// `savedReplies` id → reply, `inboxReads` [agentId, conversationId] → the read mark. One write transaction at a time:
// a claim reads and writes its thread in one, so concurrent claims cannot both win. Resolved threads and saved replies
// are read by a scan of their table (a team's inbox, not a data warehouse).
import type { InboxAgent, InboxNote, InboxThread, SavedReply } from '../../model.ts';
import type { AgentInboxStore } from '../../repos.ts';
import type { KvScope } from '../kv.ts';

/** The agent holding `t`'s handoff `since`, if anyone does. */
export const holderOf = (t: InboxThread | undefined, since: number): InboxAgent | undefined =>
  t && t.handoffSince === since && t.resolvedAt === undefined ? t.holder : undefined;

export function lmdbAgentInbox(s: KvScope): AgentInboxStore {
  return {
    claim: (conversationId, handoffSince, agent, at, from) =>
      s.atomically(async (tx) => {
        const holder = holderOf(tx.get<InboxThread>('inboxThreads', conversationId), handoffSince);
        if (holder && !from.includes(holder.agentId)) return { ok: false as const, holder };
        const thread: InboxThread = { conversationId, handoffSince, holder: agent, claimedAt: at, updatedAt: at };
        await tx.put('inboxThreads', conversationId, thread);
        return { ok: true as const, thread };
      }),
    close: (conversationId, handoffSince, at, resolvedBy) =>
      s.atomically(async (tx) => {
        const thread: InboxThread = { conversationId, handoffSince, updatedAt: at };
        if (resolvedBy) Object.assign(thread, { resolvedAt: at, resolvedBy });
        await tx.put('inboxThreads', conversationId, thread);
        return thread;
      }),
    thread: async (conversationId) => s.get<InboxThread>('inboxThreads', conversationId),
    threads: async (ids) => ids.map((id) => s.get<InboxThread>('inboxThreads', id)).filter((t) => t !== undefined),
    resolved: async (limit) =>
      [...s.range<InboxThread>('inboxThreads')]
        .map((r) => r.value)
        .filter((t) => t.resolvedAt !== undefined)
        .sort((a, b) => b.resolvedAt! - a.resolvedAt! || (a.conversationId < b.conversationId ? 1 : -1))
        .slice(0, limit),
    addNote: (note) => s.put('inboxNotes', [note.conversationId, note.at, note.id], note),
    notes: async (conversationId) =>
      [...s.range<InboxNote>('inboxNotes', { start: [conversationId, -Infinity], end: [conversationId, Infinity] })].map((r) => r.value),
    putSavedReply: (reply) =>
      s.atomically(async (tx) => {
        const taken = [...tx.range<SavedReply>('savedReplies')].some((r) => r.value.shortcut === reply.shortcut && r.value.id !== reply.id);
        if (taken) return false;
        await tx.put('savedReplies', reply.id, reply);
        return true;
      }),
    savedReplies: async () =>
      [...s.range<SavedReply>('savedReplies')].map((r) => r.value).sort((a, b) => (a.shortcut < b.shortcut ? -1 : a.shortcut > b.shortcut ? 1 : 0)),
    removeSavedReply: (id) =>
      s.atomically(async (tx) => {
        if (tx.get('savedReplies', id) === undefined) return false;
        await tx.remove('savedReplies', id);
        return true;
      }),
    markRead: (agentId, conversationId, at) =>
      s.atomically(async (tx) => {
        const known = tx.get<number>('inboxReads', [agentId, conversationId]);
        if (known === undefined || known < at) await tx.put('inboxReads', [agentId, conversationId], at);
      }),
    readMarks: async (agentId, ids) => {
      const out: Record<string, number> = {};
      for (const id of ids) {
        const at = s.get<number>('inboxReads', [agentId, id]);
        if (at !== undefined) out[id] = at;
      }
      return out;
    },
  };
}
