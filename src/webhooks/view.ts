// The `/api/v1/webhooks/deliveries` answer (and so the dashboard's card): every URL masked (mask-url.ts), the counts
// totals (stored retries and dead letters; delivered and failed attempts since this process started).
import type { DeadJob, Job } from '../store/model.ts';
import type { JobCounts } from '../store/repos.ts';
import type { DeliveriesView, DeliveryAttempt, WebhookJob } from './types.ts';
import { maskUrl } from '../config/mask-url.ts';

export function deliveriesView(o: {
  endpoints: { url: string; events?: string[] }[];
  counts: { delivered: number; failedAttempts: number };
  totals: JobCounts;
  recent: DeliveryAttempt[];
  pending: Job<WebhookJob>[];
  dead: DeadJob<WebhookJob>[];
}): DeliveriesView {
  return {
    endpoints: o.endpoints.map((e) => ({ url: maskUrl(e.url), events: e.events ?? 'all' })),
    counts: { delivered: o.counts.delivered, failedAttempts: o.counts.failedAttempts, retrying: o.totals.queued, dead: o.totals.dead },
    // Masked when remembered.
    recent: o.recent,
    retrying: o.pending.map((j) => {
      const r: DeliveriesView['retrying'][number] = {
        eventId: j.payload.event.id,
        type: j.payload.event.type,
        url: maskUrl(j.payload.url),
        attempts: j.attempts,
        nextAt: j.runAt,
      };
      if (j.lastError !== undefined) r.lastError = j.lastError;
      return r;
    }),
    dead: o.dead.map((j) => ({
      eventId: j.payload.event.id,
      type: j.payload.event.type,
      url: maskUrl(j.payload.url),
      attempts: j.attempts,
      failedAt: j.failedAt,
      error: j.error,
    })),
  };
}
