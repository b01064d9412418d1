// Reads telemetry back: events and turn-call records, filtered, paginated by
// an opaque cursor (the last id returned). Keys are time-ordered ids, so a
// `since`/`until` window is a range scan, never a full scan.
import { z } from 'zod';
import type { Store } from '../store/types.ts';
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

const idAt = (at: number) => `${String(Math.max(0, Math.floor(at))).padStart(13, '0')}`;

function matchesType(type: string, filter: string | undefined): boolean {
  if (!filter) return true;
  if (filter.endsWith('.*')) return type.startsWith(filter.slice(0, -1));
  return type === filter;
}

function scan<T extends { id: string }>(store: Store, table: 'telemetry' | 'turnCalls', q: TelemetryQuery, match: (r: T) => boolean): Page<T> {
  const limit = q.limit ?? 100;
  const desc = q.order === 'desc';
  const lower = q.since !== undefined ? `${idAt(q.since)}-` : '';
  const upper = q.until !== undefined ? `${idAt(q.until + 1)}-` : '\uffff';
  let start: string;
  let end: string;
  if (desc) {
    start = q.cursor && q.cursor < upper ? q.cursor : upper;
    end = lower;
  } else {
    start = q.cursor && q.cursor >= lower ? `${q.cursor}\u0000` : lower;
    end = upper;
  }
  const items: T[] = [];
  let more = false;
  for (const { key, value } of store.table<T>(table).range({ start, end, reverse: desc })) {
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

export function queryEvents(store: Store, q: TelemetryQuery): Page<TelemetryEvent> {
  return scan<TelemetryEvent>(store, 'telemetry', q, (e) =>
    matchesType(e.type, q.type) &&
    (!q.conversationId || e.conversationId === q.conversationId) &&
    (!q.customerId || e.customerId === q.customerId) &&
    (!q.customerExternalId || e.customerExternalId === q.customerExternalId) &&
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
