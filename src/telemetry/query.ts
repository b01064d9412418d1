// Reads telemetry back: events and turn-call records, filtered, paginated by
// an opaque cursor (the last id returned). Keys are time-ordered ids, so a
// `since`/`until` window is a range scan; a `conversationId` filter walks that
// conversation's index keys only (keys.ts), never the whole table.
import { z } from 'zod';
import type { Store } from '../store/types.ts';
import { conversationIndexEnd, conversationIndexPrefix, keyAt, RECORDS_END } from './keys.ts';
import type { TelemetryEvent, TurnCallRecord } from './types.ts';

const time = z
  .string()
  .transform((v, ctx) => {
    const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (Number.isNaN(n)) {
      ctx.addIssue({ code: 'custom', message: 'expected a time in ms since the epoch or an ISO date' });
      return z.NEVER;
    }
    return n;
  });

export const TelemetryQuerySchema = z.strictObject({
  since: time.optional(),
  until: time.optional(),
  type: z.string().min(1).max(100).optional(),
  conversationId: z.string().min(1).max(256).optional(),
  customerId: z.string().min(1).max(256).optional(),
  customerExternalId: z.string().min(1).max(256).optional(),
  turnId: z.string().min(1).max(512).optional(),
  limit: z
    .string()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1, 'at least 1').max(1000, 'at most 1000'))
    .optional(),
  cursor: z.string().regex(/^\d{13}-\d{8}$/, 'not a cursor returned by this API').optional(),
  order: z.enum(['asc', 'desc']).optional(),
});
export type TelemetryQuery = z.infer<typeof TelemetryQuerySchema>;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

function matchesType(type: string, filter: string | undefined): boolean {
  if (!filter) return true;
  if (filter.endsWith('.*')) return type.startsWith(filter.slice(0, -1));
  return type === filter;
}

function scanRecords<T extends { id: string }>(store: Store, table: 'telemetry' | 'turnCalls', q: TelemetryQuery, match: (r: T) => boolean): Page<T> {
  const limit = q.limit ?? 100;
  const lower = q.since !== undefined ? keyAt(q.since) : '';
  const upper = q.until !== undefined ? keyAt(q.until + 1) : RECORDS_END;
  let start: string;
  let end: string;
  if (q.order === 'desc') {
    start = q.cursor && q.cursor < upper ? q.cursor : upper;
    end = lower;
  } else {
    start = q.cursor && q.cursor >= lower ? `${q.cursor}\u0000` : lower;
    end = upper;
  }
  const items: T[] = [];
  let more = false;
  for (const { key, value } of store.table<T>(table).range({ start, end, reverse: q.order === 'desc' })) {
    if (q.cursor && key === q.cursor) continue;
    if (!match(value)) continue;
    if (items.length === limit) {
      more = true;
      break;
    }
    items.push(value);
  }
  return { items, nextCursor: more ? items[items.length - 1].id : null };
}

/** Through the conversation index: reads that conversation's ids (never other records), then the page's records. */
function scanConversation<T extends { id: string }>(store: Store, table: 'telemetry' | 'turnCalls', q: TelemetryQuery & { conversationId: string }, match: (r: T) => boolean): Page<T> {
  const limit = q.limit ?? 100;
  const lower = q.since !== undefined ? keyAt(q.since) : '';
  const upper = q.until !== undefined ? keyAt(q.until + 1) : RECORDS_END;
  const t = store.table<T | string[]>(table);
  const prefix = conversationIndexPrefix(q.conversationId);
  // An entry is keyed by its smallest id: entries past `until` hold nothing older.
  const ids: string[] = [];
  for (const { value } of t.range({ start: prefix, end: q.until !== undefined ? prefix + upper : conversationIndexEnd(q.conversationId) })) {
    for (const id of value as string[]) if (id >= lower && id < upper) ids.push(id);
  }
  ids.sort();
  if (q.order === 'desc') ids.reverse();
  const items: T[] = [];
  let more = false;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (i > 0 && id === ids[i - 1]) continue;
    if (q.cursor && (q.order === 'desc' ? id >= q.cursor : id <= q.cursor)) continue;
    const rec = t.get(id) as T | undefined;
    if (!rec || !match(rec)) continue;
    if (items.length === limit) {
      more = true;
      break;
    }
    items.push(rec);
  }
  return { items, nextCursor: more ? items[items.length - 1].id : null };
}

function scan<T extends { id: string }>(store: Store, table: 'telemetry' | 'turnCalls', q: TelemetryQuery, match: (r: T) => boolean): Page<T> {
  return q.conversationId !== undefined ? scanConversation(store, table, Object.assign({}, q, { conversationId: q.conversationId }), match) : scanRecords(store, table, q, match);
}

export function queryEvents(store: Store, q: TelemetryQuery, resolvedCustomerId?: string): Page<TelemetryEvent> {
  return scan<TelemetryEvent>(store, 'telemetry', q, (e) =>
    matchesType(e.type, q.type) &&
    (!q.conversationId || e.conversationId === q.conversationId) &&
    (!q.customerId || e.customerId === q.customerId) &&
    (!q.customerExternalId || e.customerExternalId === q.customerExternalId || (resolvedCustomerId !== undefined && e.customerId === resolvedCustomerId)) &&
    (!q.turnId || (e.data as { turnId?: string }).turnId === q.turnId),
  );
}

export function queryTurnCalls(store: Store, q: TelemetryQuery): Page<TurnCallRecord> {
  return scan<TurnCallRecord>(store, 'turnCalls', q, (r) =>
    matchesType(r.purpose, q.type) &&
    (!q.conversationId || r.conversationId === q.conversationId) &&
    (!q.customerId || r.customerId === q.customerId) &&
    (!q.turnId || r.turnId === q.turnId),
  );
}
