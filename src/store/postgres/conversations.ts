// Conversation records on PostgreSQL: the columns the daemon, the host and the dashboard query, the XState snapshot and
// the rest of the record as JSON.
import { keepOthersFields, reviewDueAt, type Channel, type ConversationRecord, type ConversationSummary, type MessageRecord } from '../model.ts';
import type { ConversationStore, PersistOutcome, StoreRepos } from '../repos.ts';
import { first, json, limitOf, prepared, text, type Db } from './db.ts';

interface SummaryRow {
  conversation_id: string;
  customer_id: string;
  external_id: string | null;
  channel: Channel;
  state: string;
  busy: boolean;
  updated_at: number;
  last_message_at: number | null;
  last_customer_message_at: number | null;
  reviewed_at: number | null;
  details: Details;
}
interface RecordRow extends SummaryRow {
  snapshot: unknown;
}

/** The parts of a record no query looks into. */
type Details = Pick<ConversationRecord, 'pendingConfirmation' | 'reflection' | 'followupPending' | 'reviewAttempt' | 'handoff'>;

const SUMMARY_COLUMNS =
  'conversation_id, customer_id, external_id, channel, state, busy, updated_at, last_message_at, last_customer_message_at, reviewed_at, details';
const RECORD_COLUMNS = `${SUMMARY_COLUMNS}, snapshot`;

const GET = prepared('conversations_get', `SELECT ${RECORD_COLUMNS} FROM conversations WHERE conversation_id = $1`);
// parley_lock_conversation (migration 001): the advisory lock on the id, then the row, read after the lock was granted.
const LOCK = prepared('conversations_lock', `SELECT ${RECORD_COLUMNS} FROM parley_lock_conversation($1)`);
const PUT = prepared(
  'conversations_put',
  `INSERT INTO conversations (${RECORD_COLUMNS}, followup_pending, review_due_at, handoff_since) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
   ON CONFLICT (conversation_id) DO UPDATE SET customer_id = EXCLUDED.customer_id, external_id = EXCLUDED.external_id,
     channel = EXCLUDED.channel, state = EXCLUDED.state, busy = EXCLUDED.busy, updated_at = EXCLUDED.updated_at,
     last_message_at = EXCLUDED.last_message_at, last_customer_message_at = EXCLUDED.last_customer_message_at,
     reviewed_at = EXCLUDED.reviewed_at, details = EXCLUDED.details, snapshot = EXCLUDED.snapshot,
     followup_pending = EXCLUDED.followup_pending, review_due_at = EXCLUDED.review_due_at, handoff_since = EXCLUDED.handoff_since,
     version = conversations.version + 1
   RETURNING version`,
);
const LOCK_FIELDS = prepared('conversations_lock_fields', `SELECT ${SUMMARY_COLUMNS} FROM parley_lock_conversation($1)`);
// `put` and the appended records in one statement: data-modifying CTEs always run to completion. The records are
// numbered after the conversation's last one, in the order given (the caller holds the conversation's lock).
const SAVE = prepared(
  'conversations_save',
  `WITH put AS (${PUT.text}),
   last AS (SELECT coalesce(max(seq), 0) AS n FROM messages WHERE conversation_id = $1),
   appended AS (
     INSERT INTO messages (conversation_id, seq, id, role, text, at, turn_id, proactive, data)
     SELECT $1, last.n + m.ord, m.id, m.role, m.text, m.at, m.turn_id, m.proactive, m.data
     FROM last, unnest($16::text[], $17::text[], $18::text[], $19::bigint[], $20::text[], $21::boolean[], $22::json[])
       WITH ORDINALITY AS m(id, role, text, at, turn_id, proactive, data, ord))
   SELECT version FROM put`,
);
// `save` as one statement of its own (migrations 007 and 008 say how), its arguments one JSON document (`writeDocument`)
// and, beside it, the JSON values stored as they are: the new version, or NULL when it wrote nothing.
const PERSIST_UNCHANGED = prepared(
  'conversations_persist_unchanged',
  'SELECT parley_persist_conversation($1::json, $2::json, $3::json, $4::json[]) AS version',
);
// `lockFields` with the version the record is at (persist's transaction).
const LOCK_VERSION = prepared('conversations_lock_version', `SELECT ${SUMMARY_COLUMNS}, version FROM parley_lock_conversation($1)`);
const BUSY = prepared('conversations_busy', 'SELECT conversation_id, customer_id, external_id, channel FROM conversations WHERE busy ORDER BY conversation_id');
// review_due_at is set on every put from model.ts's reviewDueAt (the partial index conversations_due_for_review).
const DUE = prepared(
  'conversations_due',
  `SELECT conversation_id, last_message_at FROM conversations
   WHERE review_due_at IS NOT NULL AND review_due_at <= $1
   ORDER BY review_due_at, conversation_id LIMIT $2`,
);
const FOLLOWUPS = prepared('conversations_followups', 'SELECT conversation_id FROM conversations WHERE followup_pending ORDER BY conversation_id LIMIT $1');
const SUMMARIES_OF = prepared(
  'conversations_summaries_of',
  `SELECT ${SUMMARY_COLUMNS} FROM conversations WHERE conversation_id = ANY($1::text[])
   ORDER BY array_position($1::text[], conversation_id) LIMIT $2`,
);
const RECENT = prepared(
  'conversations_recent',
  `SELECT ${SUMMARY_COLUMNS} FROM conversations ORDER BY coalesce(last_message_at, updated_at) DESC, conversation_id LIMIT $1`,
);
// The agent inbox (migration 003's partial index conversations_with_human).
const WITH_HUMAN = prepared(
  'conversations_with_human',
  `SELECT ${SUMMARY_COLUMNS} FROM conversations WHERE handoff_since IS NOT NULL
   ORDER BY handoff_since DESC, conversation_id DESC LIMIT $1`,
);
const WITH_HUMAN_BEFORE = prepared(
  'conversations_with_human_before',
  `SELECT ${SUMMARY_COLUMNS} FROM conversations WHERE handoff_since IS NOT NULL AND (handoff_since, conversation_id) < ($2, $3)
   ORDER BY handoff_since DESC, conversation_id DESC LIMIT $1`,
);

function toSummary(r: SummaryRow): ConversationSummary {
  const s: ConversationSummary = {
    conversationId: r.conversation_id,
    customerId: r.customer_id,
    channel: r.channel,
    state: r.state,
    busy: r.busy,
    updatedAt: r.updated_at,
  };
  if (r.external_id !== null) s.externalId = r.external_id;
  if (r.last_message_at !== null) s.lastMessageAt = r.last_message_at;
  if (r.last_customer_message_at !== null) s.lastCustomerMessageAt = r.last_customer_message_at;
  if (r.reviewed_at !== null) s.reviewedAt = r.reviewed_at;
  const d = r.details;
  if (d.pendingConfirmation !== undefined) s.pendingConfirmation = d.pendingConfirmation;
  if (d.reflection !== undefined) s.reflection = d.reflection;
  if (d.followupPending !== undefined) s.followupPending = d.followupPending;
  if (d.reviewAttempt !== undefined) s.reviewAttempt = d.reviewAttempt;
  if (d.handoff !== undefined) s.handoff = d.handoff;
  return s;
}

function toRecord(r: RecordRow | undefined): ConversationRecord | undefined {
  if (!r) return undefined;
  return Object.assign(toSummary(r), { snapshot: r.snapshot });
}

const detailsOf = (c: ConversationRecord): Details => ({
  pendingConfirmation: c.pendingConfirmation,
  reflection: c.reflection,
  followupPending: c.followupPending,
  reviewAttempt: c.reviewAttempt,
  handoff: c.handoff,
});

function putValues(c: ConversationRecord): unknown[] {
  const details = detailsOf(c);
  return [
    c.conversationId,
    c.customerId,
    c.externalId ?? null,
    c.channel,
    c.state,
    c.busy,
    c.updatedAt,
    c.lastMessageAt ?? null,
    c.lastCustomerMessageAt ?? null,
    c.reviewedAt ?? null,
    json(details),
    json(c.snapshot),
    c.followupPending !== undefined,
    reviewDueAt(c) ?? null,
    c.handoff?.since ?? null,
  ];
}

function saveValues(c: ConversationRecord, messages: MessageRecord[]): unknown[] {
  if (messages.some((m) => m.conversationId !== c.conversationId)) throw new Error('save: every record must belong to the conversation saved');
  return [
    ...putValues(c),
    messages.map((m) => m.id),
    messages.map((m) => m.role),
    messages.map((m) => text(m.text)),
    messages.map((m) => m.at),
    messages.map((m) => m.turnId ?? null),
    messages.map((m) => m.proactive ?? null),
    messages.map((m) => json(m.data)),
  ];
}

/**
 * The one-statement write's arguments (migration 008): the record's columns by name, the checks and the new records in
 * one JSON document; the snapshot, the details and each record's data beside it (a \u0000 escape in them would make
 * PostgreSQL refuse the whole document).
 */
function writeArguments(c: ConversationRecord, messages: MessageRecord[], expected: { version: number; owner?: { nodeId: string; epoch: number } }): unknown[] {
  if (messages.some((m) => m.conversationId !== c.conversationId)) throw new Error('save: every record must belong to the conversation saved');
  const document = JSON.stringify({
    expected: expected.version,
    owner_node: expected.owner?.nodeId,
    owner_epoch: expected.owner?.epoch,
    conversation_id: c.conversationId,
    customer_id: c.customerId,
    external_id: c.externalId,
    channel: c.channel,
    state: c.state,
    busy: c.busy,
    updated_at: c.updatedAt,
    last_message_at: c.lastMessageAt,
    last_customer_message_at: c.lastCustomerMessageAt,
    reviewed_at: c.reviewedAt,
    followup_pending: c.followupPending !== undefined,
    review_due_at: reviewDueAt(c),
    handoff_since: c.handoff?.since,
    messages: messages.map((m) => ({ id: m.id, role: m.role, text: text(m.text), at: m.at, turn_id: m.turnId, proactive: m.proactive })),
  });
  return [document, json(c.snapshot), json(detailsOf(c)), messages.map((m) => json(m.data))];
}

/** A transaction on the pool that also hands its callback the transaction's Db (store.ts `inTransaction`). */
export type PgTransaction = <T>(fn: (tx: StoreRepos, db: Db) => Promise<T>) => Promise<T>;

/**
 * `persist`'s transaction: the owner's check, the lock (with the version the record is at), the customer messages
 * already stored, the record (keeping others' fields when they wrote it), the channel's writes.
 */
async function persistInTransaction(
  tx: StoreRepos,
  db: Db,
  record: ConversationRecord,
  messages: MessageRecord[],
  { version, owner }: { version?: number; owner?: { nodeId: string; epoch: number } },
  channelWrites: ((tx: StoreRepos) => Promise<void>) | undefined,
): Promise<PersistOutcome> {
  const id = record.conversationId;
  if (owner) await tx.ownership.assertOwner(id, owner.nodeId, owner.epoch);
  const stored = await first(db.rows<SummaryRow & { version: number }>(LOCK_VERSION, [id]));
  const seen: string[] = [];
  for (const m of messages) if (m.role === 'user' && (await tx.history.seen(id, m.id))) seen.push(m.id);
  if (seen.length) return { seen };
  const othersWrote = stored !== undefined && stored.version !== version;
  const toWrite = othersWrote ? keepOthersFields(toSummary(stored), record, messages) : record;
  const [row] = await db.rows<{ version: number }>(SAVE, saveValues(toWrite, messages));
  if (channelWrites) await channelWrites(tx);
  return { version: row.version, othersWrote, record: toWrite };
}

/** `transaction`: given on the pool's repositories (`persist` runs its own), not on a transaction's. */
export function postgresConversations(db: Db, transaction?: PgTransaction): ConversationStore {
  const saveUnchanged = async (c: ConversationRecord, messages: MessageRecord[], expected: { version: number; owner?: { nodeId: string; epoch: number } }) => {
    const [row] = await db.rows<{ version: number | null }>(PERSIST_UNCHANGED, writeArguments(c, messages, expected));
    return row.version ?? undefined;
  };
  return {
    get: async (id) => toRecord(await first(db.rows<RecordRow>(GET, [id]))),
    lock: async (id) => toRecord(await first(db.rows<RecordRow>(LOCK, [id]))),
    lockFields: async (id) => {
      const row = await first(db.rows<SummaryRow>(LOCK_FIELDS, [id]));
      return row && toSummary(row);
    },
    put: async (c) => {
      await db.rows(PUT, putValues(c));
    },
    save: async (c, messages) => {
      const [row] = await db.rows<{ version: number }>(SAVE, saveValues(c, messages));
      return row.version;
    },
    saveIfUnchanged: saveUnchanged,
    persist: async (record, messages, expected, channelWrites) => {
      if (!transaction) throw new Error('conversations.persist runs its own transaction: call it on the store, not on a transaction');
      // The one statement when it applies (nothing else to write, and a version to be at); anything it refuses is
      // sorted out in the transaction, where each case has its answer.
      if (!channelWrites && expected.version !== undefined) {
        const version = await saveUnchanged(record, messages, { version: expected.version, owner: expected.owner });
        if (version !== undefined) return { version, othersWrote: false, record };
      }
      return transaction((tx, txDb) => persistInTransaction(tx, txDb, record, messages, expected, channelWrites));
    },
    busy: async () => {
      const rows = await db.rows<Pick<SummaryRow, 'conversation_id' | 'customer_id' | 'external_id' | 'channel'>>(BUSY, []);
      return rows.map((r) => {
        const meta: { conversationId: string; customerId: string; channel: Channel; externalId?: string } = {
          conversationId: r.conversation_id,
          customerId: r.customer_id,
          channel: r.channel,
        };
        if (r.external_id !== null) meta.externalId = r.external_id;
        return meta;
      });
    },
    dueForReview: async (cutoff, limit) => {
      const rows = await db.rows<{ conversation_id: string; last_message_at: number }>(DUE, [cutoff, limitOf(limit)]);
      return rows.map((r) => ({ conversationId: r.conversation_id, lastMessageAt: r.last_message_at }));
    },
    withPendingFollowup: async (limit) => (await db.rows<{ conversation_id: string }>(FOLLOWUPS, [limitOf(limit)])).map((r) => r.conversation_id),
    withHuman: async ({ before, limit }) => {
      const rows = before
        ? await db.rows<SummaryRow>(WITH_HUMAN_BEFORE, [limitOf(limit), before.since, before.conversationId])
        : await db.rows<SummaryRow>(WITH_HUMAN, [limitOf(limit)]);
      return rows.map(toSummary);
    },
    summaries: async ({ ids, limit }) => {
      const rows = ids ? await db.rows<SummaryRow>(SUMMARIES_OF, [ids, limitOf(limit)]) : await db.rows<SummaryRow>(RECENT, [limitOf(limit)]);
      return rows.map(toSummary);
    },
  };
}
