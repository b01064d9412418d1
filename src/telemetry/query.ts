// Reads telemetry back: events and turn-call records, filtered, paginated by
// an opaque cursor (the last id returned). Segments are keyed by time-ordered ids,
// so a `since`/`until` window reads only the segments around it; a `conversationId`
// filter decodes only that conversation's records, found through its index (keys.ts).
import { z } from 'zod';
import type { Store } from '../store/types.ts';
import { eventCodec, turnCallCodec, type RecordCodec } from './codec.ts';
import { keyAt } from './keys.ts';
import { readConversation, readRange, type TelemetryTable } from './segment-reader.ts';
import type { TelemetryEvent, TurnCallRecord } from './types.ts';

const time = z.string().transform((v, ctx) => {
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
  cursor: z
    .string()
    .regex(/^\d{13}-\d{8}$/, 'not a cursor returned by this API')
    .optional(),
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

/** One page: records in id order inside the window, after the cursor, that match. */
function scan<T extends { id: string; conversationId?: string }>(
  store: Store,
  table: TelemetryTable,
  codec: RecordCodec<T>,
  q: TelemetryQuery,
  match: (r: T) => boolean,
): Page<T> {
  const limit = q.limit ?? 100;
  const desc = q.order === 'desc';
  let lower = q.since !== undefined ? keyAt(q.since) : undefined;
  let upper = q.until !== undefined ? keyAt(q.until + 1) : undefined;
  if (q.cursor && desc && (upper === undefined || q.cursor < upper)) upper = q.cursor;
  if (q.cursor && !desc && (lower === undefined || q.cursor >= lower)) lower = `${q.cursor}\u0000`;
  const bounds = { lower, upper, reverse: desc };
  const records = q.conversationId !== undefined ? readConversation(store, table, codec, q.conversationId, bounds) : readRange(store, table, codec, bounds);
  const items: T[] = [];
  let more = false;
  for (const r of records) {
    if (!match(r)) continue;
    if (items.length === limit) {
      more = true;
      break;
    }
    items.push(r);
  }
  return { items, nextCursor: more ? items[items.length - 1].id : null };
}

export function queryEvents(store: Store, q: TelemetryQuery, resolvedCustomerId?: string): Page<TelemetryEvent> {
  return scan<TelemetryEvent>(
    store,
    'telemetry',
    eventCodec(),
    q,
    (e) =>
      matchesType(e.type, q.type) &&
      (!q.conversationId || e.conversationId === q.conversationId) &&
      (!q.customerId || e.customerId === q.customerId) &&
      (!q.customerExternalId || e.customerExternalId === q.customerExternalId || (resolvedCustomerId !== undefined && e.customerId === resolvedCustomerId)) &&
      (!q.turnId || (e.data as { turnId?: string }).turnId === q.turnId),
  );
}

export function queryTurnCalls(store: Store, q: TelemetryQuery): Page<TurnCallRecord> {
  return scan<TurnCallRecord>(
    store,
    'turnCalls',
    turnCallCodec(),
    q,
    (r) =>
      matchesType(r.purpose, q.type) &&
      (!q.conversationId || r.conversationId === q.conversationId) &&
      (!q.customerId || r.customerId === q.customerId) &&
      (!q.turnId || r.turnId === q.turnId),
  );
}
