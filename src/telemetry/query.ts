// The telemetry read API's query: parsed and bounded here, answered by the store's engine (filters, the time
// window on `at`, order, a cursor that is the last id returned).
import { z } from 'zod';
import type { TelemetryFilter } from '../store/repos.ts';

/** The latest time a Date holds, in ms since the epoch: a later `since` or `until` names no time (and overflows PostgreSQL's bigint). */
export const LATEST_MS = 8_640_000_000_000_000;

/** A time in ms since the epoch, as a query value. */
export const epochMs = z
  .string()
  .regex(/^\d+$/, 'ms since the epoch')
  .transform(Number)
  .pipe(z.number().max(LATEST_MS, `at most ${LATEST_MS} (the latest date)`));

const time = z.string().transform((v, ctx) => {
  const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (Number.isNaN(n) || n > LATEST_MS) {
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

/** The store's filter for a parsed query; `customerIds` are the ids a customerExternalId resolved to. */
export function toFilter(q: TelemetryQuery, customerIds?: string[]): TelemetryFilter {
  return {
    since: q.since,
    until: q.until,
    type: q.type,
    conversationId: q.conversationId,
    customerId: q.customerId,
    customerExternalId: q.customerExternalId,
    customerIds,
    turnId: q.turnId,
    limit: q.limit ?? 100,
    cursor: q.cursor,
    order: q.order ?? 'asc',
  };
}
