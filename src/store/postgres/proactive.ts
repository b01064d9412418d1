// The proactive guardrails' records on PostgreSQL: accepted sends (the sliding cap window) and dedup keys.
import type { ProactiveStore } from '../repos.ts';
import { prepared, type Db } from './db.ts';

const DEDUP = prepared('proactive_dedup', 'SELECT sent_at FROM proactive_dedup WHERE customer_id = $1 AND dedup_key = $2');
const COUNT = prepared('proactive_count', 'SELECT count(*) AS n FROM proactive_sends WHERE customer_id = $1 AND at > $2');
const RECORD = prepared(
  'proactive_record',
  `WITH send AS (
     INSERT INTO proactive_sends (customer_id, at, message_id, channel) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING
   )
   INSERT INTO proactive_dedup (customer_id, dedup_key, sent_at, message_id) SELECT $1, $5, $2, $3 WHERE $5::text IS NOT NULL
   ON CONFLICT (customer_id, dedup_key) DO UPDATE SET sent_at = EXCLUDED.sent_at, message_id = EXCLUDED.message_id`,
);
const PRUNE = prepared(
  'proactive_prune',
  `WITH dedup AS (DELETE FROM proactive_dedup WHERE sent_at <= $1 RETURNING 1),
        sends AS (DELETE FROM proactive_sends WHERE at <= $2 RETURNING 1)
   SELECT (SELECT count(*) FROM dedup) + (SELECT count(*) FROM sends) AS n`,
);

export function postgresProactive(db: Db): ProactiveStore {
  return {
    dedupSentAt: async (customerId, dedupKey) => (await db.rows<{ sent_at: number }>(DEDUP, [customerId, dedupKey]))[0]?.sent_at,
    countSentAfter: async (customerId, sinceExclusive) => (await db.rows<{ n: number }>(COUNT, [customerId, sinceExclusive]))[0].n,
    recordSend: async (s) => {
      await db.rows(RECORD, [s.customerId, s.at, s.messageId, s.channel, s.dedupKey ?? null]);
    },
    // As the ledger decides: a dedup key counts while `now - sentAt < dedupWindowMs`, a send while `now - at < capWindowMs`.
    prune: async ({ now, dedupWindowMs, capWindowMs }) => (await db.rows<{ n: number }>(PRUNE, [now - dedupWindowMs, now - capWindowMs]))[0].n,
  };
}
