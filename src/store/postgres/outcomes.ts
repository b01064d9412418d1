// Conversation outcomes on PostgreSQL: `conversation_outcomes` (migration 013), the record as JSON beside the columns
// the sweep and the lists filter on.
import type { ConversationOutcome, OutcomeStore } from '../outcomes.ts';
import { json, prepared, type Db } from './db.ts';

const GET = prepared('outcomes_get', 'SELECT body FROM conversation_outcomes WHERE conversation_id = $1');
const PUT = prepared(
  'outcomes_put',
  `INSERT INTO conversation_outcomes (conversation_id, customer_id, channel, status, started_at, decide_at, body)
   VALUES ($1, $2, $3, $4, $5, $6, $7)
   ON CONFLICT (conversation_id) DO UPDATE SET customer_id = EXCLUDED.customer_id, channel = EXCLUDED.channel,
     status = EXCLUDED.status, started_at = EXCLUDED.started_at, decide_at = EXCLUDED.decide_at, body = EXCLUDED.body`,
);
const DUE = prepared('outcomes_due', 'SELECT conversation_id FROM conversation_outcomes WHERE decide_at <= $1 ORDER BY decide_at, conversation_id LIMIT $2');
const NEXT_DUE = prepared('outcomes_next_due', 'SELECT min(decide_at) AS at FROM conversation_outcomes WHERE decide_at IS NOT NULL');
const LIST = prepared(
  'outcomes_list',
  `SELECT body FROM conversation_outcomes
   WHERE started_at >= $1 AND started_at <= $2 AND ($3::text IS NULL OR channel = $3) AND ($4::text IS NULL OR status = $4)
     AND ($5::text IS NULL OR customer_id = $5)
   ORDER BY started_at DESC, conversation_id DESC LIMIT $6`,
);

export function postgresOutcomes(db: Db): OutcomeStore {
  return {
    get: async (id) => (await db.rows<{ body: ConversationOutcome }>(GET, [id]))[0]?.body,
    put: async (o) => {
      await db.rows(PUT, [o.conversationId, o.customerId, o.channel, o.status, o.startedAt, o.decideAt ?? null, json(o)]);
    },
    due: async (now, limit) => (await db.rows<{ conversation_id: string }>(DUE, [now, limit])).map((r) => r.conversation_id),
    nextDue: async () => {
      const at = (await db.rows<{ at: string | number | null }>(NEXT_DUE, []))[0]?.at;
      return at === null || at === undefined ? undefined : Number(at);
    },
    list: async (f) =>
      (
        await db.rows<{ body: ConversationOutcome }>(LIST, [
          f.since ?? 0,
          f.until ?? Number.MAX_SAFE_INTEGER,
          f.channel ?? null,
          f.status ?? null,
          f.customerId ?? null,
          f.limit,
        ])
      ).map((r) => r.body),
  };
}
