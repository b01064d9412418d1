// The WhatsApp channel's delivery bookkeeping on PostgreSQL: accepted sends by provider id, statuses that came first,
// sends the provider accepted and sends whose answer is not recorded, inbound messages answered as confirmations.
import type { DeliveryRecord, EarlyStatus } from '../model.ts';
import type { WhatsAppStore } from '../repos.ts';
import { first, json, prepared, type Db } from './db.ts';

interface DeliveryRow {
  provider_message_id: string;
  job_id: string;
  source_id: string;
  customer_id: string;
  conversation_id: string | null;
  to_number: string;
  status: string;
  sent_at: number;
  updated_at: number;
  errors: unknown[] | null;
}

const DELIVERY_COLUMNS = 'provider_message_id, job_id, source_id, customer_id, conversation_id, to_number, status, sent_at, updated_at, errors';

const DELIVERY = prepared('wa_delivery', `SELECT ${DELIVERY_COLUMNS} FROM wa_deliveries WHERE provider_message_id = $1`);
const PUT_DELIVERY = prepared(
  'wa_put_delivery',
  `INSERT INTO wa_deliveries (${DELIVERY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
   ON CONFLICT (provider_message_id) DO UPDATE SET job_id = EXCLUDED.job_id, source_id = EXCLUDED.source_id,
     customer_id = EXCLUDED.customer_id, conversation_id = EXCLUDED.conversation_id, to_number = EXCLUDED.to_number,
     status = EXCLUDED.status, sent_at = EXCLUDED.sent_at, updated_at = EXCLUDED.updated_at, errors = EXCLUDED.errors`,
);
const EARLY = prepared('wa_early', 'SELECT status, at, errors FROM wa_early_statuses WHERE provider_message_id = $1');
const PUT_EARLY = prepared(
  'wa_put_early',
  `INSERT INTO wa_early_statuses (provider_message_id, status, at, errors) VALUES ($1, $2, $3, $4)
   ON CONFLICT (provider_message_id) DO UPDATE SET status = EXCLUDED.status, at = EXCLUDED.at, errors = EXCLUDED.errors`,
);
const REMOVE_EARLY = prepared('wa_remove_early', 'DELETE FROM wa_early_statuses WHERE provider_message_id = $1');
const SENT = prepared('wa_sent', 'SELECT provider_message_id, at FROM wa_sent WHERE job_id = $1');
const PUT_SENT = prepared(
  'wa_put_sent',
  `INSERT INTO wa_sent (job_id, provider_message_id, at) VALUES ($1, $2, $3)
   ON CONFLICT (job_id) DO UPDATE SET provider_message_id = EXCLUDED.provider_message_id, at = EXCLUDED.at`,
);
const ATTEMPT = prepared('wa_attempt', 'SELECT started_at FROM wa_send_attempts WHERE job_id = $1');
const PUT_ATTEMPT = prepared(
  'wa_put_attempt',
  'INSERT INTO wa_send_attempts (job_id, started_at) VALUES ($1, $2) ON CONFLICT (job_id) DO UPDATE SET started_at = EXCLUDED.started_at',
);
const REMOVE_ATTEMPT = prepared('wa_remove_attempt', 'DELETE FROM wa_send_attempts WHERE job_id = $1');
const HANDLED = prepared('wa_handled', 'SELECT 1 FROM wa_handled WHERE wa_message_id = $1');
const MARK_HANDLED = prepared(
  'wa_mark_handled',
  'INSERT INTO wa_handled (wa_message_id, at) VALUES ($1, $2) ON CONFLICT (wa_message_id) DO UPDATE SET at = EXCLUDED.at',
);
const PRUNE = prepared(
  'wa_prune',
  `WITH handled AS (DELETE FROM wa_handled WHERE at < $1 RETURNING 1),
        sent AS (DELETE FROM wa_sent WHERE at < $1 RETURNING 1),
        deliveries AS (DELETE FROM wa_deliveries WHERE updated_at < $1 RETURNING 1),
        early AS (DELETE FROM wa_early_statuses WHERE at < $1 RETURNING 1)
   SELECT (SELECT count(*) FROM handled) + (SELECT count(*) FROM sent) + (SELECT count(*) FROM deliveries) + (SELECT count(*) FROM early) AS n`,
);

function toDelivery(r: DeliveryRow | undefined): DeliveryRecord | undefined {
  if (!r) return undefined;
  const d: DeliveryRecord = {
    providerMessageId: r.provider_message_id,
    jobId: r.job_id,
    sourceId: r.source_id,
    customerId: r.customer_id,
    to: r.to_number,
    status: r.status,
    sentAt: r.sent_at,
    updatedAt: r.updated_at,
  };
  if (r.conversation_id !== null) d.conversationId = r.conversation_id;
  if (r.errors !== null) d.errors = r.errors;
  return d;
}

export function postgresWhatsApp(db: Db): WhatsAppStore {
  return {
    delivery: async (id) => toDelivery(await first(db.rows<DeliveryRow>(DELIVERY, [id]))),
    putDelivery: async (d) => {
      await db.rows(PUT_DELIVERY, [
        d.providerMessageId,
        d.jobId,
        d.sourceId,
        d.customerId,
        d.conversationId ?? null,
        d.to,
        d.status,
        d.sentAt,
        d.updatedAt,
        json(d.errors),
      ]);
    },
    earlyStatus: async (id) => {
      const r = await first(db.rows<{ status: string; at: number; errors: unknown[] | null }>(EARLY, [id]));
      if (!r) return undefined;
      const s: EarlyStatus = { status: r.status, at: r.at };
      if (r.errors !== null) s.errors = r.errors;
      return s;
    },
    putEarlyStatus: async (id, s) => {
      await db.rows(PUT_EARLY, [id, s.status, s.at, json(s.errors)]);
    },
    removeEarlyStatus: async (id) => {
      await db.rows(REMOVE_EARLY, [id]);
    },
    sent: async (jobId) => {
      const r = await first(db.rows<{ provider_message_id: string; at: number }>(SENT, [jobId]));
      return r ? { providerMessageId: r.provider_message_id, at: r.at } : undefined;
    },
    putSent: async (jobId, v) => {
      await db.rows(PUT_SENT, [jobId, v.providerMessageId, v.at]);
    },
    sendAttempt: async (jobId) => {
      const r = await first(db.rows<{ started_at: number }>(ATTEMPT, [jobId]));
      return r ? { startedAt: r.started_at } : undefined;
    },
    putSendAttempt: async (jobId, v) => {
      await db.rows(PUT_ATTEMPT, [jobId, v.startedAt]);
    },
    removeSendAttempt: async (jobId) => {
      await db.rows(REMOVE_ATTEMPT, [jobId]);
    },
    handled: async (waMessageId) => (await db.rows(HANDLED, [waMessageId])).length > 0,
    markHandled: async (waMessageId, at) => {
      await db.rows(MARK_HANDLED, [waMessageId, at]);
    },
    prune: async (before) => (await db.rows<{ n: number }>(PRUNE, [before]))[0].n,
  };
}
