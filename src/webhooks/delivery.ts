// Signed outbound webhooks: each event is stored as one job per endpoint that wants it in the durable job queue
// (`webhooks`), then POSTed as `{id, type, createdAt, data}` with `parley-signature`. A 2xx is delivered; anything else
// (a status, a timeout, a refused connection) is retried with exponential backoff and jitter for
// `webhooks_retry_hours`, then dead-lettered. The event id is the same on every retry: receivers drop duplicates by it.
import { createHash, randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { WebhookEvent } from '../../sdk/src/agent-api.ts';
import { SIGNATURE_HEADER, signWebhook } from '../../sdk/src/webhook-signature.ts';
import { createJobQueue, type DeadJob, type Job, type JobQueue } from '../jobs/queue.ts';
import type { Services } from '../services.ts';
import type { StoreRepos } from '../store/repos.ts';
import type { NewWebhookEvent } from './events.ts';

export interface WebhookJob {
  /** The endpoint's URL: its secret is read from the config when sending (never stored). */
  url: string;
  event: WebhookEvent;
}

export interface DeliveryAttempt {
  eventId: string;
  type: string;
  url: string;
  attempt: number;
  at: number;
  /** The HTTP status, or the network error's code. */
  result: number | string;
  outcome: 'delivered' | 'retrying' | 'dead';
  nextAt?: number;
}

export interface Webhooks {
  /** Stores one delivery per endpoint that wants this event; resolves once durable. */
  emit(e: NewWebhookEvent): Promise<void>;
  /**
   * Inside the caller's transaction: stores the deliveries of these events, so they commit (or not) with the fact they
   * report. Returns what to run after the commit (wakes the queue).
   */
  prepare(tx: StoreRepos, events: NewWebhookEvent[]): Promise<() => void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  idle(): Promise<void>;
  /** For the dashboard and `/api/v1/webhooks/deliveries`. */
  deliveries(limit: number): Promise<{
    endpoints: { url: string; events: string[] | 'all' }[];
    counts: { delivered: number; failedAttempts: number; retrying: number; dead: number };
    recent: DeliveryAttempt[];
    retrying: { eventId: string; type: string; url: string; attempts: number; nextAt: number; lastError?: string }[];
    dead: { eventId: string; type: string; url: string; attempts: number; failedAt: number; error: string }[];
  }>;
  /** Counters for `/metrics`. */
  counters(): { delivered: number; failedAttempts: number; dead: number; depth: number };
}

const MAX_DELAY_MS = 3600_000;
const RECENT = 100;

/** Exponential backoff with "equal jitter": half the doubled delay fixed, half random, so gaps grow on every retry. */
export function retryDelay(attempts: number, baseMs: number, random: () => number = Math.random): number {
  const d = Math.min(MAX_DELAY_MS, baseMs * 2 ** attempts);
  return Math.round(d / 2 + (random() * d) / 2);
}

const endpointKey = (url: string) => createHash('sha256').update(url).digest('hex').slice(0, 16);

export function createWebhooks(services: Services): Webhooks {
  const { config, clock, store, logger, telemetry } = services;
  const log = logger.child({ component: 'webhooks' });
  const endpoints = config.webhooks;
  const retryMs = config.webhooks_retry_hours * 3600_000;
  const recent: DeliveryAttempt[] = [];
  const counts = { delivered: 0, failedAttempts: 0, dead: 0 };

  const remember = (a: DeliveryAttempt) => {
    recent.unshift(a);
    if (recent.length > RECENT) recent.length = RECENT;
  };

  const send = async (job: Job<WebhookJob>): Promise<number | string> => {
    const endpoint = endpoints.find((e) => e.url === job.payload.url);
    if (!endpoint) return 'endpoint_removed';
    const body = JSON.stringify(job.payload.event);
    const t = Math.floor(clock.now() / 1000);
    try {
      const res = await request(endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'Parley-Webhooks', [SIGNATURE_HEADER]: signWebhook(endpoint.secret, body, t) },
        body,
        headersTimeout: config.webhooks_timeout_ms,
        bodyTimeout: config.webhooks_timeout_ms,
      });
      await res.body.dump();
      return res.statusCode;
    } catch (err) {
      return (err as { code?: string }).code ?? 'network_error';
    }
  };

  const queue: JobQueue<WebhookJob> = createJobQueue<WebhookJob>({
    store,
    clock,
    logger,
    name: 'webhooks',
    // No order between deliveries: one endpoint refusing one event never holds the others back.
    orderingKey: (p) => `${p.event.id}:${p.url}`,
    concurrency: 8,
    leaseMs: config.webhooks_timeout_ms + 5000,
    // Bounded by time (webhooks_retry_hours), not by a count of attempts.
    maxAttempts: Number.MAX_SAFE_INTEGER,
    keepDoneIds: true,
    onDeadLetter: (job: DeadJob<WebhookJob>) => {
      counts.dead++;
      telemetry.event({
        type: 'webhook.dead_letter',
        data: { eventId: job.payload.event.id, eventType: job.payload.event.type, url: job.payload.url, attempts: job.attempts, error: job.error },
      });
    },
    handler: async (job) => {
      const { event, url } = job.payload;
      const result = await send(job);
      const now = clock.now();
      const base = { eventId: event.id, type: event.type, url, attempt: job.attempts + 1, at: now, result };
      if (typeof result === 'number' && result >= 200 && result < 300) {
        counts.delivered++;
        remember(Object.assign({ outcome: 'delivered' as const }, base));
        return 'done';
      }
      counts.failedAttempts++;
      const error = typeof result === 'number' ? `HTTP ${result}` : result;
      if (result === 'endpoint_removed' || now - job.enqueuedAt >= retryMs) {
        remember(Object.assign({ outcome: 'dead' as const }, base));
        log.warn({ eventId: event.id, url, attempts: job.attempts + 1, error }, 'webhook dead-lettered');
        return { fail: result === 'endpoint_removed' ? 'the endpoint is no longer configured' : `gave up after ${config.webhooks_retry_hours} h: ${error}` };
      }
      const nextAt = Math.min(now + retryDelay(job.attempts, config.webhooks_retry_base_ms), job.enqueuedAt + retryMs);
      remember(Object.assign({ outcome: 'retrying' as const, nextAt }, base));
      return { retryAt: nextAt, error };
    },
  });

  /** One delivery per endpoint that wants the event, each with an id stable across retries. */
  const deliveriesOf = (e: NewWebhookEvent) => {
    const wanted = endpoints.filter((ep) => !ep.events || ep.events.includes(e.type));
    if (wanted.length === 0) return [];
    const event: WebhookEvent = { id: `evt_${randomUUID()}`, type: e.type, createdAt: e.createdAt, data: e.data };
    return wanted.map((ep) => ({ payload: { url: ep.url, event }, options: { id: `wh:${event.id}:${endpointKey(ep.url)}` } }));
  };

  return {
    async emit(e) {
      const items = deliveriesOf(e);
      if (items.length) await queue.enqueueAll(items);
    },
    async prepare(tx, events) {
      const jobs: (Job<WebhookJob> | undefined)[] = [];
      for (const e of events) for (const item of deliveriesOf(e)) jobs.push(await queue.prepare(tx, item.payload, item.options));
      return () => (jobs.length ? queue.accept(jobs) : undefined);
    },
    start: () => queue.start(),
    stop: () => queue.stop(),
    idle: () => queue.idle(),
    counters: () => ({ delivered: counts.delivered, failedAttempts: counts.failedAttempts, dead: counts.dead, depth: queue.depth() }),
    async deliveries(limit) {
      const [pending, dead] = await Promise.all([store.jobs.pending<WebhookJob>('webhooks'), queue.deadLetters(limit)]);
      return {
        endpoints: endpoints.map((e) => ({ url: e.url, events: e.events ?? 'all' })),
        counts: { delivered: counts.delivered, failedAttempts: counts.failedAttempts, retrying: pending.length, dead: dead.length },
        recent: recent.slice(0, limit),
        retrying: pending.slice(0, limit).map((j) => {
          const r: { eventId: string; type: string; url: string; attempts: number; nextAt: number; lastError?: string } = {
            eventId: j.payload.event.id,
            type: j.payload.event.type,
            url: j.payload.url,
            attempts: j.attempts,
            nextAt: j.runAt,
          };
          if (j.lastError !== undefined) r.lastError = j.lastError;
          return r;
        }),
        dead: dead.map((j) => ({
          eventId: j.payload.event.id,
          type: j.payload.event.type,
          url: j.payload.url,
          attempts: j.attempts,
          failedAt: j.failedAt,
          error: j.error,
        })),
      };
    },
  };
}
