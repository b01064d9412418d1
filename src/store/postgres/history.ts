// Every message of a conversation, numbered 1, 2, … per conversation, on PostgreSQL.
import type { MessageRecord, MessageRole } from '../model.ts';
import type { HistoryStore } from '../repos.ts';
import { json, limitOf, prepared, text, type Db } from './db.ts';

interface MessageRow {
  conversation_id: string;
  seq: number;
  id: string;
  role: MessageRole;
  text: string;
  at: number;
  turn_id: string | null;
  proactive: boolean | null;
  data: Record<string, unknown> | null;
}

const COLUMNS = 'conversation_id, seq, id, role, text, at, turn_id, proactive, data';

// The next number is read and used in one statement. The caller holds the conversation's lock, so no other
// transaction appends to it meanwhile (were one to, the primary key would refuse the second row, not duplicate it).
const APPEND = prepared(
  'history_append',
  `INSERT INTO messages (${COLUMNS})
   SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4, $5, $6, $7, $8 FROM messages WHERE conversation_id = $1
   RETURNING seq`,
);
const SEEN = prepared('history_seen', `SELECT 1 FROM messages WHERE conversation_id = $1 AND id = $2 AND role = 'user' LIMIT 1`);
const RECENT = prepared('history_recent', `SELECT ${COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY seq DESC LIMIT $2`);
const RECENT_ROLES = prepared(
  'history_recent_roles',
  `SELECT ${COLUMNS} FROM messages WHERE conversation_id = $1 AND role = ANY($3::text[]) ORDER BY seq DESC LIMIT $2`,
);
const LAST_SEQ = prepared('history_last_seq', 'SELECT coalesce(max(seq), 0) AS seq FROM messages WHERE conversation_id = $1');
const SINCE = prepared('history_since', `SELECT ${COLUMNS} FROM messages WHERE conversation_id = $1 AND seq > $2 ORDER BY seq`);
const PAGE = prepared(
  'history_page',
  `SELECT ${COLUMNS} FROM messages WHERE conversation_id = $1 AND ($2::bigint IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3`,
);

// One statement: the rows leave `from` and are numbered after `into`'s last (the caller holds both conversations' locks).
const MOVE = prepared(
  'history_move',
  `WITH moved AS (DELETE FROM messages WHERE conversation_id = $1 RETURNING ${COLUMNS}),
   base AS (SELECT coalesce(max(seq), 0) AS n FROM messages WHERE conversation_id = $2)
   INSERT INTO messages (${COLUMNS})
   SELECT $2, base.n + row_number() OVER (ORDER BY moved.seq), id, role, text, at, turn_id, proactive, data FROM moved, base
   RETURNING seq`,
);

function toRecord(r: MessageRow): MessageRecord {
  const m: MessageRecord = { id: r.id, conversationId: r.conversation_id, role: r.role, text: r.text, at: r.at };
  if (r.turn_id !== null) m.turnId = r.turn_id;
  if (r.proactive !== null) m.proactive = r.proactive;
  if (r.data !== null) m.data = r.data;
  return m;
}

const numbered = (r: MessageRow) => ({ seq: r.seq, record: toRecord(r) });

export function postgresHistory(db: Db): HistoryStore {
  return {
    append: async (m) => {
      const [row] = await db.rows<{ seq: number }>(APPEND, [
        m.conversationId,
        m.id,
        m.role,
        text(m.text),
        m.at,
        m.turnId ?? null,
        m.proactive ?? null,
        json(m.data),
      ]);
      return row.seq;
    },
    seen: async (conversationId, clientId) => (await db.rows(SEEN, [conversationId, clientId])).length > 0,
    recent: async (conversationId, limit, roles) => {
      const rows = roles
        ? await db.rows<MessageRow>(RECENT_ROLES, [conversationId, limitOf(limit), roles])
        : await db.rows<MessageRow>(RECENT, [conversationId, limitOf(limit)]);
      return rows.reverse().map(toRecord);
    },
    lastSeq: async (conversationId) => (await db.rows<{ seq: number }>(LAST_SEQ, [conversationId]))[0]?.seq ?? 0,
    since: async (conversationId, seq) => (await db.rows<MessageRow>(SINCE, [conversationId, seq])).map(numbered),
    page: async (conversationId, { before, limit }) =>
      (await db.rows<MessageRow>(PAGE, [conversationId, before ?? null, limitOf(limit)])).reverse().map(numbered),
    move: async (from, into) => (from === into ? 0 : (await db.rows(MOVE, [from, into])).length),
  };
}
