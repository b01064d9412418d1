// The durable inbox on PostgreSQL (migration 006): a conversation's events waiting for its owner, in id order.
import type { InboxEntry, InboxEvent, InboxStore } from '../repos.ts';
import { json, limitOf, prepared, type Db } from './db.ts';

interface InboxRow {
  id: number;
  conversation_id: string;
  event: InboxEvent;
  at: number;
}

const POST = prepared('inbox_post', 'INSERT INTO conversation_inbox (conversation_id, event, at) VALUES ($1, $2, $3) RETURNING id');
const LIST = prepared('inbox_list', 'SELECT id, conversation_id, event, at FROM conversation_inbox WHERE conversation_id = $1 ORDER BY id');
const REMOVE = prepared('inbox_remove', 'DELETE FROM conversation_inbox WHERE id = ANY($1::bigint[])');
const UNATTENDED = prepared(
  'inbox_unattended',
  `SELECT i.conversation_id FROM conversation_inbox i LEFT JOIN conversation_owners o ON o.conversation_id = i.conversation_id
   WHERE o.node_id IS NULL OR o.node_id NOT IN (SELECT node_id FROM parley_live_nodes)
   GROUP BY i.conversation_id ORDER BY min(i.id) LIMIT $1`,
);

const OVERDUE = prepared(
  'inbox_overdue',
  `SELECT i.conversation_id FROM conversation_inbox i JOIN conversation_owners o ON o.conversation_id = i.conversation_id
   WHERE o.node_id = $1 AND i.at < $2
   GROUP BY i.conversation_id ORDER BY min(i.id) LIMIT $3`,
);

const entryOf = (r: InboxRow): InboxEntry => ({ id: r.id, conversationId: r.conversation_id, event: r.event, at: r.at });

export function postgresInbox(db: Db): InboxStore {
  return {
    post: async (conversationId, event, at) => {
      const [row] = await db.rows<{ id: number }>(POST, [conversationId, json(event), at]);
      return { id: row.id, conversationId, event, at };
    },
    list: async (conversationId) => (await db.rows<InboxRow>(LIST, [conversationId])).map(entryOf),
    remove: async (ids) => {
      if (ids.length) await db.rows(REMOVE, [ids]);
    },
    unattended: async (limit) => (await db.rows<{ conversation_id: string }>(UNATTENDED, [limitOf(limit)])).map((r) => r.conversation_id),
    overdue: async (nodeId, before, limit) =>
      (await db.rows<{ conversation_id: string }>(OVERDUE, [nodeId, before, limitOf(limit)])).map((r) => r.conversation_id),
  };
}
