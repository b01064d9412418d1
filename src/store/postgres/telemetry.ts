// Telemetry on PostgreSQL: events and turn calls as rows, read back in id order (ids are time-ordered) with every
// filter of the telemetry API, pages continuing after the cursor (the last id returned).
import type { TelemetryEvent, TurnCallRecord } from '../telemetry-records.ts';
import type { TelemetryFilter, TelemetryKind, TelemetryPage, TelemetryStore } from '../repos.ts';
import { prepared, type Db } from './db.ts';
import { EVENT_COLUMNS, TURN_CALL_COLUMNS, toEvent, toTurnCall, type EventRow, type TurnCallRow } from './telemetry-rows.ts';
import { createPostgresTelemetryWriter } from './telemetry-writer.ts';

/** How many of the newest events `recentConversationIds` looks through (as the LMDB engine does). */
const RECENT_EVENTS_SCANNED = 20_000;
/** Rows deleted per statement by `prune`, so a large backlog never runs into the statement timeout. */
const PRUNE_BATCH = 5000;

const RECENT_CONVERSATIONS = prepared(
  'telemetry_recent_conversations',
  `SELECT conversation_id FROM (
     SELECT conversation_id, id FROM telemetry_events WHERE conversation_id IS NOT NULL ORDER BY id DESC LIMIT ${RECENT_EVENTS_SCANNED}
   ) newest GROUP BY conversation_id ORDER BY max(id) DESC LIMIT $1`,
);
const PRUNE = prepared(
  'telemetry_prune',
  `WITH events AS (
     DELETE FROM telemetry_events WHERE id IN (SELECT id FROM telemetry_events WHERE at < $1 LIMIT ${PRUNE_BATCH}) RETURNING 1
   ), calls AS (
     DELETE FROM telemetry_turn_calls WHERE id IN (SELECT id FROM telemetry_turn_calls WHERE at < $1 LIMIT ${PRUNE_BATCH}) RETURNING 1
   )
   SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM calls) AS calls`,
);
// Read in pages by id (keyset), so a long window streams without holding it all.
const WINDOW_PAGE = 2000;
const WINDOW = {
  events: prepared(
    'telemetry_window_events',
    `SELECT ${EVENT_COLUMNS} FROM telemetry_events WHERE at >= $1 AND at <= $2 AND id > $3 ORDER BY id LIMIT ${WINDOW_PAGE}`,
  ),
  turnCalls: prepared(
    'telemetry_window_turn_calls',
    `SELECT ${TURN_CALL_COLUMNS} FROM telemetry_turn_calls WHERE at >= $1 AND at <= $2 AND id > $3 ORDER BY id LIMIT ${WINDOW_PAGE}`,
  ),
};

interface Query {
  text: string;
  values: unknown[];
}

/** The WHERE … ORDER BY … LIMIT of one page; values are always parameters. */
function pageQuery(kind: TelemetryKind, f: TelemetryFilter): Query {
  const values: unknown[] = [];
  const where: string[] = [];
  const param = (v: unknown) => `$${values.push(v)}`;
  if (f.since !== undefined) where.push(`at >= ${param(f.since)}`);
  if (f.until !== undefined) where.push(`at <= ${param(f.until)}`);
  if (f.type !== undefined) {
    const column = kind === 'events' ? 'type' : 'purpose';
    if (f.type.endsWith('.*')) where.push(`starts_with(${column}, ${param(f.type.slice(0, -1))})`);
    else where.push(`${column} = ${param(f.type)}`);
  }
  if (f.conversationId !== undefined) where.push(`conversation_id = ${param(f.conversationId)}`);
  if (f.customerId !== undefined) where.push(`customer_id = ${param(f.customerId)}`);
  // customerIds are what customerExternalId resolved to: on their own they filter nothing (as on LMDB).
  if (f.customerExternalId !== undefined) {
    const ids = `customer_id = ANY(${param(f.customerIds ?? [])}::text[])`;
    // Turn calls carry no external id: only the customer's own ids can match them.
    if (kind === 'events') where.push(`(customer_external_id = ${param(f.customerExternalId)} OR ${ids})`);
    else where.push(ids);
  }
  if (f.turnId !== undefined) where.push(`turn_id = ${param(f.turnId)}`);
  if (f.cursor !== undefined) where.push(`id ${f.order === 'desc' ? '<' : '>'} ${param(f.cursor)}`);
  const table = kind === 'events' ? 'telemetry_events' : 'telemetry_turn_calls';
  const columns = kind === 'events' ? EVENT_COLUMNS : TURN_CALL_COLUMNS;
  const limit = param(Math.max(0, Math.floor(f.limit)) + 1);
  return {
    text: `SELECT ${columns} FROM ${table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id ${f.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ${limit}`,
    values,
  };
}

async function page<R, T extends { id: string }>(db: Db, kind: TelemetryKind, f: TelemetryFilter, map: (r: R) => T): Promise<TelemetryPage<T>> {
  const q = pageQuery(kind, f);
  const rows = await db.rows<R>({ text: q.text }, q.values);
  const more = rows.length > f.limit;
  const items = (more ? rows.slice(0, f.limit) : rows).map(map);
  return { items, nextCursor: more && items.length ? items[items.length - 1].id : null };
}

export function postgresTelemetry(db: Db, o: { onDropped?: (records: number, err: unknown) => void } = {}): TelemetryStore {
  return {
    writer: () => createPostgresTelemetryWriter(db, o),
    events: (f) => page<EventRow, TelemetryEvent>(db, 'events', f, toEvent),
    turnCalls: (f) => page<TurnCallRow, TurnCallRecord>(db, 'turnCalls', f, toTurnCall),
    async *window<K extends TelemetryKind>(kind: K, { since, until }: { since: number; until: number }) {
      let after = '';
      for (;;) {
        const rows = await db.rows<EventRow & TurnCallRow>(WINDOW[kind], [since, until, after]);
        for (const row of rows) yield (kind === 'events' ? toEvent(row) : toTurnCall(row)) as K extends 'events' ? TelemetryEvent : TurnCallRecord;
        if (rows.length < WINDOW_PAGE) return;
        after = rows[rows.length - 1].id;
      }
    },
    recentConversationIds: async (limit) => (await db.rows<{ conversation_id: string }>(RECENT_CONVERSATIONS, [limit])).map((r) => r.conversation_id),
    prune: async (before) => {
      let total = 0;
      for (;;) {
        const [r] = await db.rows<{ events: number; calls: number }>(PRUNE, [before]);
        total += r.events + r.calls;
        if (r.events < PRUNE_BATCH && r.calls < PRUNE_BATCH) return total;
      }
    },
    start: () => undefined,
    stop: async () => undefined,
  };
}
