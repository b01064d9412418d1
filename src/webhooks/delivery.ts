// Signed outbound webhooks: each event is stored as one job per endpoint that wants it in the durable job queue
// (`webhooks`), then POSTed as `{id, type, createdAt, data}` with `parley-signature`. A 2xx is delivered; 410 Gone ends
// that delivery (dead-lettered); anything else (a status, the deadline, a refused connection, a refused address) is
// retried with exponential backoff and jitter for `webhooks_retry_hours`, then dead-lettered. The event id is the same
// on every retry: receivers drop duplicates by it. Each endpoint has its own slots, connections and circuit
// (endpoints.ts): the queue's claims pass over an endpoint that is full, so it never holds another's deliveries back.
import { randomUUID } from 'node:crypto';
import type { WebhookEvent } from '../../sdk/src/agent-api.ts';
import { SIGNATURE_HEADER, signWebhook } from '../../sdk/src/webhook-signature.ts';
import { createJobQueue, type DeadJob, type Job, type JobQueue } from '../jobs/queue.ts';
import type { Services } from '../services.ts';
import type { StoreRepos } from '../store/repos.ts';
import { deadLetterPayload } from './dead-letter.ts';
import { createEndpoints, endpointKey, keyPrefix } from './endpoints.ts';
import { endpointWants, type NewWebhookEvent } from './events.ts';
import type { DeliveriesView, DeliveryAttempt, WebhookJob } from './types.ts';
import { maskUrl } from '../config/mask-url.ts';
import { isOk, judge } from './outcome.ts';
import { createWebhookPruner } from './pruning.ts';
import { postOnce } from './send.ts';
import { deliveriesView } from './view.ts';

export type { DeliveriesView, DeliveryAttempt, WebhookJob } from './types.ts';

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
  deliveries(limit: number): Promise<DeliveriesView>;
  /** Prunes delivered ids and dead letters older than `webhooks.keep_days` now (also hourly once started). */
  prune(): Promise<number>;
  /** Counters for `/metrics`. */
  counters(): { delivered: number; failedAttempts: number; dead: number; depth: number };
}

const RECENT = 100;
export const QUEUE = 'webhooks';
export { retryDelay } from './outcome.ts';

export function createWebhooks(services: Services): Webhooks {
  const { config, clock, store, logger, telemetry } = services;
  const log = logger.child({ component: 'webhooks' });
  const wh = config.webhooks;
  const recent: DeliveryAttempt[] = [];
  const counts = { delivered: 0, failedAttempts: 0, dead: 0 };
  const stopping = new AbortController();
  const endpoints = createEndpoints({
    endpoints: wh.endpoints,
    concurrency: wh.concurrency_per_endpoint,
    allowPrivate: wh.allow_private,
    clock,
    firstOpenMs: Math.max(1000, config.webhooks_retry_base_ms),
  });

  const remember = (a: DeliveryAttempt) => {
    recent.unshift(Object.assign({}, a, { url: maskUrl(a.url) }));
    if (recent.length > RECENT) recent.length = RECENT;
  };

  /** One attempt through the endpoint's gate: its answer, or `busy` (no room: the job waits without an attempt). */
  const attempt = async (job: Job<WebhookJob>, signal: AbortSignal): Promise<number | string> => {
    const endpoint = endpoints.get(job.payload.url);
    if (!endpoint) return 'endpoint_removed';
    const gate = endpoints.enter(endpoint);
    if (!gate.go) return gate.why;
    let result: number | string = 'aborted';
    // The slot is the connection: it stays taken while the answer's body drains (under the same deadline), so a
    // next attempt never waits inside undici for a connection while its own deadline runs out.
    let posted = false;
    let released = false;
    let answered = false;
    const leave = () => endpoints.leave(endpoint, isOk(result), gate.probe);
    const onReleased = () => {
      released = true;
      if (!answered) return;
      // Freed after the job ended: jobs passed over for want of room may go now.
      leave();
      queue.wake();
    };
    try {
      const body = JSON.stringify(job.payload.event);
      const t = Math.floor(clock.now() / 1000);
      const headers = Object.assign(
        { 'content-type': 'application/json', 'user-agent': 'Parley-Webhooks', [SIGNATURE_HEADER]: signWebhook(endpoint.config.secret, body, t) },
        endpoint.headers,
      );
      posted = true;
      result = await postOnce({
        url: endpoint.target,
        body,
        headers,
        dispatcher: endpoint.agent,
        timeoutMs: config.webhooks_timeout_ms,
        clock,
        signals: [signal, stopping.signal],
        onReleased,
      });
      return result;
    } finally {
      answered = true;
      if (!posted || released) leave();
    }
  };

  const queue: JobQueue<WebhookJob> = createJobQueue<WebhookJob>({
    store,
    clock,
    logger,
    name: QUEUE,
    // No order between deliveries (one refused event never holds the others back); the endpoint's prefix first, so
    // claims can pass over an endpoint that has no room.
    orderingKey: (p) => `${keyPrefix(p.url)}${p.event.id}`,
    // Every endpoint's slots, so a full one never takes another's.
    concurrency: Math.max(1, wh.endpoints.length) * wh.concurrency_per_endpoint,
    claimLimits: () => {
      const all = endpoints.list();
      const busy = endpoints.busyPrefixes();
      const room = all.reduce((n, e) => n + (busy.includes(e.prefix) ? 0 : wh.concurrency_per_endpoint - e.inFlight), 0);
      return { skipKeyPrefixes: busy, room: Math.max(room, 0) };
    },
    // The lease outlives the attempt's one deadline, so a job never runs twice at once (and a run whose lease ends
    // anyway is aborted).
    leaseMs: config.webhooks_timeout_ms + 5000,
    // Bounded by time (webhooks_retry_hours), not by a count of attempts.
    maxAttempts: Number.MAX_SAFE_INTEGER,
    keepDoneIds: true,
    deadPayload: deadLetterPayload,
    onDeadLetter: (job: DeadJob<WebhookJob>) => {
      counts.dead++;
      telemetry.event({
        type: 'webhook.dead_letter',
        data: { eventId: job.payload.event.id, eventType: job.payload.event.type, url: maskUrl(job.payload.url), attempts: job.attempts, error: job.error },
      });
    },
    handler: async (job, { signal }) => {
      const { event, url } = job.payload;
      const result = await attempt(job, signal);
      const now = clock.now();
      const v = judge(result, job, { now, retryHours: config.webhooks_retry_hours, retryBaseMs: config.webhooks_retry_base_ms });
      if (v.kind === 'busy') return { waitUntil: v.waitUntil, reason: v.reason };
      const base = { eventId: event.id, type: event.type, url, attempt: job.attempts + 1, at: now, result };
      if (v.kind === 'delivered') {
        counts.delivered++;
        remember(Object.assign({ outcome: 'delivered' as const }, base));
        return 'done';
      }
      counts.failedAttempts++;
      if (v.kind === 'dead') {
        remember(Object.assign({ outcome: 'dead' as const }, base));
        log.warn({ eventId: event.id, url: maskUrl(url), attempts: job.attempts + 1, error: v.error }, 'webhook dead-lettered');
        return { fail: v.reason };
      }
      remember(Object.assign({ outcome: 'retrying' as const, nextAt: v.nextAt }, base));
      return { retryAt: v.nextAt, error: v.error };
    },
  });

  const pruner = createWebhookPruner({ clock, logger: log, keepDays: wh.keep_days, prune: (before) => queue.prune(before) });

  /** One delivery per endpoint that wants the event, each with an id stable across retries. */
  const deliveriesOf = (e: NewWebhookEvent) => {
    const wanted = wh.endpoints.filter((ep) => endpointWants(ep.events, e.type));
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
    async start() {
      await queue.start();
      pruner.start();
    },
    async stop() {
      pruner.stop();
      stopping.abort();
      await queue.stop();
      await endpoints.close();
    },
    idle: () => queue.idle(),
    prune: () => pruner.prune(),
    counters: () => ({ delivered: counts.delivered, failedAttempts: counts.failedAttempts, dead: counts.dead, depth: queue.depth() }),
    async deliveries(limit) {
      // The totals first: the lists, read after them, hold at least what they count.
      const totals = await store.jobs.counts(QUEUE);
      const [pending, dead] = await Promise.all([store.jobs.pending<WebhookJob>(QUEUE), queue.deadLetters(limit)]);
      return deliveriesView({ endpoints: wh.endpoints, counts, totals, recent: recent.slice(0, limit), pending: pending.slice(0, limit), dead });
    },
  };
}
