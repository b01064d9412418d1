// Telemetry read API (service secret) and Prometheus metrics.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { CustomerRepo } from '../customers/repo.ts';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import { costReport } from './costs.ts';
import { readKnowledgeInsights } from './knowledge-insights.ts';
import { epochMs, TelemetryQuerySchema, toFilter } from './query.ts';
import { recentConversations } from './recent-conversations.ts';
import { fitWindow } from './summary-window.ts';
import { summarize } from './summary.ts';
import { handoffSummary } from './handoff-summary.ts';

const SummaryQuery = z.strictObject({
  since: epochMs.optional(),
  until: epochMs.optional(),
  bucketMs: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1000).max(86_400_000)).optional(),
  /** `1`: start the window at its first record, with a bucket from that span (no larger than `bucketMs`). */
  fit: z.enum(['0', '1']).optional(),
  channel: z.enum(['web', 'whatsapp']).optional(),
});
/** A summary holds at most this many buckets (a day in 10-second buckets): more is a lot of memory for one request. */
const MAX_SUMMARY_BUCKETS = 10_000;

const CostsQuery = z.strictObject({
  since: epochMs.optional(),
  until: epochMs.optional(),
  by: z.enum(['turn', 'conversation', 'customer', 'day']).default('day'),
  conversationId: z.string().min(1).max(256).optional(),
  customerId: z.string().min(1).max(256).optional(),
  limit: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(1000)).optional(),
});
const KnowledgeQuery = z.strictObject({
  since: epochMs.optional(),
  until: epochMs.optional(),
  limit: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(100)).optional(),
});
const WindowQuery = z.strictObject({
  since: epochMs.optional(),
  until: epochMs.optional(),
});
const ConversationsQuery = z.strictObject({
  limit: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(500)).optional(),
  channel: z.enum(['web', 'whatsapp']).optional(),
});

export async function telemetryPlugin(
  app: FastifyInstance,
  o: {
    services: Services;
    customers: CustomerRepo;
    metricsText: () => Promise<string>;
    auth?: (request: FastifyRequest) => Promise<void>;
    /** The knowledge base's article titles (the knowledge card names the most used articles). */
    articleTitle?: (articleId: string) => Promise<string | undefined>;
  },
) {
  const { services } = o;
  // The service secret, or (wired) a signed-in person's session or key: the dashboard reads these.
  const onRequest = o.auth ?? requireServiceSecret(() => services.secret);

  app.get('/api/v1/telemetry/events', { onRequest }, async (request) => {
    const q = parseOr400(TelemetryQuerySchema, request.query, 'query');
    // Events carry customerId, customerExternalId or both (a WhatsApp status knows only the customerId).
    const resolved = q.customerExternalId ? (await o.customers.findBy('ext', q.customerExternalId))?.customerId : undefined;
    await services.telemetry.flush();
    return services.store.telemetry.events(toFilter(q, q.customerExternalId ? (resolved ? [resolved] : []) : undefined));
  });

  app.get('/api/v1/telemetry/turn-calls', { onRequest }, async (request) => {
    const q = parseOr400(TelemetryQuerySchema, request.query, 'query');
    // Turn calls carry only the customerId: an external id is resolved to it, and an unknown one matches nothing.
    let customerId = q.customerId;
    if (q.customerExternalId) {
      const c = await o.customers.findBy('ext', q.customerExternalId);
      if (!c) return { items: [], nextCursor: null };
      customerId ??= c.customerId;
    }
    await services.telemetry.flush();
    return services.store.telemetry.turnCalls(toFilter(Object.assign({}, q, { customerExternalId: undefined, customerId })));
  });

  app.get('/api/v1/telemetry/summary', { onRequest }, async (request) => {
    const q = parseOr400(SummaryQuery, request.query, 'query');
    await services.telemetry.flush();
    const until = q.until ?? services.clock.now();
    const asked = { since: q.since ?? until - 24 * 3600_000, until, bucketMs: q.bucketMs };
    const window = q.fit === '1' ? await fitWindow(services.store.telemetry, { since: asked.since, until, maxBucketMs: q.bucketMs }) : asked;
    // Without bucketMs the summary picks about 48 buckets; with it, since=0&bucketMs=1000 asked for 1.8 billion.
    const buckets = window.bucketMs ? Math.ceil((window.until - window.since) / window.bucketMs) : 0;
    if (buckets > MAX_SUMMARY_BUCKETS) {
      throw new HttpError(
        'validation_failed',
        `query.bucketMs: the window holds ${buckets} buckets, at most ${MAX_SUMMARY_BUCKETS}: a larger bucketMs or a shorter window`,
      );
    }
    return Object.assign(await summarize(services.store.telemetry, Object.assign(window, { channel: q.channel })), {
      currency: services.config.telemetry.currency,
    });
  });

  app.get('/api/v1/telemetry/costs', { onRequest }, async (request) => {
    const q = parseOr400(CostsQuery, request.query, 'query');
    await services.telemetry.flush();
    const until = q.until ?? services.clock.now();
    const since = q.since ?? until - 30 * 24 * 3600_000;
    return costReport(services.store.telemetry, Object.assign({}, q, { since, until, currency: services.config.telemetry.currency }));
  });

  // Issue 36: the questions the knowledge base could not answer, and the articles it answered with.
  app.get('/api/v1/telemetry/knowledge', { onRequest }, async (request) => {
    const q = parseOr400(KnowledgeQuery, request.query, 'query');
    await services.telemetry.flush();
    const until = q.until ?? services.clock.now();
    return readKnowledgeInsights(services.store.telemetry, {
      since: q.since ?? until - 30 * 24 * 3600_000,
      until,
      limit: q.limit ?? 20,
      titleOf: o.articleTitle ?? (() => Promise.resolve(undefined)),
    });
  });

  // Handoffs over a window (default: the last 24 h): counts, time to first agent reply and to resolution, per agent.
  app.get('/api/v1/telemetry/handoffs', { onRequest }, async (request) => {
    const q = parseOr400(WindowQuery, request.query, 'query');
    await services.telemetry.flush();
    const until = q.until ?? services.clock.now();
    const names = new Map((await services.store.agents.list()).map((a) => [a.agentId, a.name]));
    return handoffSummary(services.store.telemetry, { since: q.since ?? until - 24 * 3600_000, until, agentName: (id) => names.get(id) });
  });

  app.get('/api/v1/telemetry/conversations', { onRequest }, async (request) => {
    const q = parseOr400(ConversationsQuery, request.query, 'query');
    await services.telemetry.flush();
    return {
      items: await recentConversations(services.store, q.limit ?? 50, {
        customer: (id) => o.customers.get(id),
        withText: services.config.telemetry.store_text,
        channel: q.channel,
      }),
    };
  });

  const metricsOpts = services.config.telemetry.metrics_public ? {} : { onRequest };
  app.get('/metrics', metricsOpts, async (_request, reply) => {
    reply.type('text/plain; version=0.0.4; charset=utf-8');
    return o.metricsText();
  });
}
