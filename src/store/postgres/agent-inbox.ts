// The agent inbox on PostgreSQL (migration 013). A claim is one statement: an upsert whose update runs only when the
// stored row has no live holder for this handoff (or one of `from` holds it), so of concurrent claims, from any node,
// the row lock lets exactly one win; a loser reads the winner (and tries again if the hold ended meanwhile).
import type { InboxNote, InboxThread, SavedReply } from '../model.ts';
import type { AgentInboxStore, InboxClaim } from '../repos.ts';
import { json, prepared, text, type Db } from './db.ts';

const CLAIM = prepared(
  'agent_inbox_claim',
  `INSERT INTO inbox_threads AS t (conversation_id, handoff_since, holder_id, resolved_at, body) VALUES ($1, $2, $3, NULL, $4)
   ON CONFLICT (conversation_id) DO UPDATE SET handoff_since = EXCLUDED.handoff_since, holder_id = EXCLUDED.holder_id,
     resolved_at = NULL, body = EXCLUDED.body
   WHERE t.handoff_since <> EXCLUDED.handoff_since OR t.holder_id IS NULL OR t.resolved_at IS NOT NULL OR t.holder_id = ANY($5::text[])
   RETURNING body`,
);
const CLOSE = prepared(
  'agent_inbox_close',
  `INSERT INTO inbox_threads AS t (conversation_id, handoff_since, holder_id, resolved_at, body) VALUES ($1, $2, NULL, $3, $4)
   ON CONFLICT (conversation_id) DO UPDATE SET handoff_since = EXCLUDED.handoff_since, holder_id = NULL, resolved_at = EXCLUDED.resolved_at,
     body = EXCLUDED.body`,
);
const THREAD = prepared('agent_inbox_thread', 'SELECT body FROM inbox_threads WHERE conversation_id = $1');
const THREADS = prepared('agent_inbox_threads', 'SELECT body FROM inbox_threads WHERE conversation_id = ANY($1::text[])');
const RESOLVED = prepared(
  'agent_inbox_resolved',
  'SELECT body FROM inbox_threads WHERE resolved_at IS NOT NULL ORDER BY resolved_at DESC, conversation_id DESC LIMIT $1',
);
const ADD_NOTE = prepared(
  'agent_inbox_add_note',
  'INSERT INTO inbox_notes (id, conversation_id, at, body) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
);
const NOTES = prepared('agent_inbox_notes', 'SELECT body FROM inbox_notes WHERE conversation_id = $1 ORDER BY at, id');
// The shortcut's uniqueness is the index's: a conflict on it writes nothing (and returns no row).
const PUT_REPLY = prepared(
  'agent_inbox_put_reply',
  `INSERT INTO saved_replies (id, shortcut, body) VALUES ($1, $2, $3)
   ON CONFLICT (id) DO UPDATE SET shortcut = EXCLUDED.shortcut, body = EXCLUDED.body RETURNING 1 AS ok`,
);
const REPLIES = prepared('agent_inbox_replies', 'SELECT body FROM saved_replies ORDER BY shortcut');
const REMOVE_REPLY = prepared('agent_inbox_remove_reply', 'DELETE FROM saved_replies WHERE id = $1 RETURNING 1 AS ok');
const MARK_READ = prepared(
  'agent_inbox_mark_read',
  `INSERT INTO inbox_reads AS r (agent_id, conversation_id, at) VALUES ($1, $2, $3)
   ON CONFLICT (agent_id, conversation_id) DO UPDATE SET at = greatest(r.at, EXCLUDED.at)`,
);
const READS = prepared('agent_inbox_reads', 'SELECT conversation_id, at FROM inbox_reads WHERE agent_id = $1 AND conversation_id = ANY($2::text[])');

type Body<T> = { body: T };
const UNIQUE_VIOLATION = '23505';

export function postgresAgentInbox(db: Db): AgentInboxStore {
  const bodies = async <T>(s: Parameters<Db['rows']>[0], values: unknown[]) => (await db.rows<Body<T>>(s, values)).map((r) => r.body);
  return {
    async claim(conversationId, handoffSince, agent, at, from): Promise<InboxClaim> {
      const thread: InboxThread = { conversationId, handoffSince, holder: agent, claimedAt: at, updatedAt: at };
      for (;;) {
        const [won] = await bodies<InboxThread>(CLAIM, [conversationId, handoffSince, agent.agentId, json(thread), from]);
        if (won) return { ok: true, thread: won };
        const [now] = await bodies<InboxThread>(THREAD, [conversationId]);
        const holder = now && now.handoffSince === handoffSince && now.resolvedAt === undefined ? now.holder : undefined;
        // The hold ended between the two statements: claim again.
        if (holder) return { ok: false, holder };
      }
    },
    async close(conversationId, handoffSince, at, resolvedBy) {
      const thread: InboxThread = { conversationId, handoffSince, updatedAt: at };
      if (resolvedBy) Object.assign(thread, { resolvedAt: at, resolvedBy });
      await db.rows(CLOSE, [conversationId, handoffSince, resolvedBy ? at : null, json(thread)]);
      return thread;
    },
    thread: async (conversationId) => (await bodies<InboxThread>(THREAD, [conversationId]))[0],
    threads: (ids) => bodies<InboxThread>(THREADS, [ids]),
    resolved: (limit) => bodies<InboxThread>(RESOLVED, [limit]),
    addNote: async (note) => {
      await db.rows(ADD_NOTE, [note.id, note.conversationId, note.at, json(Object.assign({}, note, { text: text(note.text) }))]);
    },
    notes: (conversationId) => bodies<InboxNote>(NOTES, [conversationId]),
    async putSavedReply(reply) {
      try {
        return (await db.rows(PUT_REPLY, [reply.id, reply.shortcut, json(Object.assign({}, reply, { text: text(reply.text) }))])).length === 1;
      } catch (err) {
        if ((err as { code?: string }).code === UNIQUE_VIOLATION) return false;
        throw err;
      }
    },
    savedReplies: () => bodies<SavedReply>(REPLIES, []),
    removeSavedReply: async (id) => (await db.rows(REMOVE_REPLY, [id])).length === 1,
    markRead: async (agentId, conversationId, at) => {
      await db.rows(MARK_READ, [agentId, conversationId, at]);
    },
    readMarks: async (agentId, ids) => {
      const out: Record<string, number> = {};
      for (const r of await db.rows<{ conversation_id: string; at: number | string }>(READS, [agentId, ids])) out[r.conversation_id] = Number(r.at);
      return out;
    },
  };
}
