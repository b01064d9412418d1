// Outcomes over HTTP: `GET /api/v1/telemetry/outcomes` (the summary and the conversations, filtered), its CSV export
// (`/api/v1/telemetry/outcomes.csv`), and for agents `GET /conversations/:id/outcome` and
// `PUT /conversations/:id/outcome/reason` (the handoff reason category). The service secret, or a signed-in agent.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { OutcomeReasonRequest } from '../../sdk/src/agent-api.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import { OUTCOMES, type ConversationOutcome } from '../store/outcomes.ts';
import { epochMs } from '../telemetry/query.ts';
import { lastMessage } from '../telemetry/recent-conversations.ts';
import { toCsv, type OutcomeRow } from './csv.ts';
import { summarizeOutcomes } from './summary.ts';
import type { OutcomeTracker } from './tracker.ts';

const OutcomesQuery = z.strictObject({
  since: epochMs.optional(),
  until: epochMs.optional(),
  channel: z.enum(['web', 'whatsapp']).optional(),
  outcome: z.enum(['open', ...OUTCOMES]).optional(),
  /** A customer: its id, externalId or email. */
  customer: z.string().min(1).max(320).optional(),
  limit: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(1000)).optional(),
});
const Params = z.object({ conversationId: z.string().min(1).max(256) });

/** At most this many conversations are summarized per request (the newest of the window). */
const SUMMARY_LIMIT = 20_000;
/** A customer named by something that is not indexed is looked for among at most this many conversations. */
const UNINDEXED_LIMIT = 2000;

export async function outcomesPlugin(
  app: FastifyInstance,
  o: { services: Services; customers: CustomerRepo; tracker: OutcomeTracker; auth?: (request: FastifyRequest) => Promise<void> },
) {
  const { services, customers } = o;
  const onRequest = o.auth ?? requireServiceSecret(() => services.secret);

  /** The customer named by id, externalId or email; undefined when none is (the list is then empty). */
  const customerIdOf = async (name: string) =>
    (await customers.get(name))?.customerId ?? (await customers.findBy('ext', name))?.customerId ?? (await customers.findBy('email', name))?.customerId;

  const rowsOf = async (q: z.infer<typeof OutcomesQuery>, limit: number) => {
    const until = q.until ?? services.clock.now();
    const since = q.since ?? until - 30 * 86_400_000;
    const customerId = q.customer === undefined ? undefined : await customerIdOf(q.customer);
    const filter = { since, until, channel: q.channel, status: q.outcome, limit };
    if (q.customer === undefined || customerId !== undefined)
      return { since, until, records: await services.store.outcomes.list(Object.assign(filter, { customerId })) };
    // Not an indexed identity (an anonymous session's email is a claim nobody checked, kept out of the index): matched
    // against the window's newest conversations as the list shows them.
    const name = q.customer.toLowerCase();
    const recent = await services.store.outcomes.list(Object.assign(filter, { limit: Math.min(limit, UNINDEXED_LIMIT) }));
    const records: ConversationOutcome[] = [];
    for (const r of recent) {
      const c = await customers.get(r.customerId);
      if (c?.email?.toLowerCase() === name || c?.phone === q.customer || r.externalId === q.customer) records.push(r);
    }
    return { since, until, records };
  };

  const withCustomer = async (r: ConversationOutcome): Promise<OutcomeRow> => {
    const row: OutcomeRow = Object.assign({}, r);
    const c = await customers.get(r.customerId);
    if (c && (c.email || c.phone)) row.customer = Object.assign({}, c.email ? { email: c.email } : {}, c.phone ? { phone: c.phone } : {});
    if (services.config.telemetry.store_text) {
      const last = await lastMessage(services.store, r.conversationId);
      if (last) row.lastMessage = last;
    }
    return row;
  };

  app.get('/api/v1/telemetry/outcomes', { onRequest }, async (request) => {
    const q = parseOr400(OutcomesQuery, request.query, 'query');
    await services.telemetry.flush();
    const { since, until, records } = await rowsOf(q, SUMMARY_LIMIT);
    const items = await Promise.all(records.slice(0, q.limit ?? 100).map(withCustomer));
    return { since, until, summary: summarizeOutcomes(records), items };
  });

  app.get('/api/v1/telemetry/outcomes.csv', { onRequest }, async (request, reply) => {
    const q = parseOr400(OutcomesQuery, request.query, 'query');
    await services.telemetry.flush();
    const { records } = await rowsOf(q, q.limit ?? SUMMARY_LIMIT);
    const rows = await Promise.all(records.map(withCustomer));
    reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="parley-conversations.csv"');
    return toCsv(rows, services.config.telemetry.store_text);
  });

  app.get('/conversations/:conversationId/outcome', { onRequest }, async (request) => {
    const { conversationId } = parseOr400(Params, request.params, 'params');
    const record = await services.store.outcomes.get(conversationId);
    if (!record) throw new HttpError('not_found', 'This conversation has no outcome yet');
    return record;
  });

  app.put('/conversations/:conversationId/outcome/reason', { onRequest }, async (request) => {
    const { conversationId } = parseOr400(Params, request.params, 'params');
    const { reason } = parseOr400(OutcomeReasonRequest, request.body, 'body');
    const record = await o.tracker.setReason(conversationId, reason);
    if (record) return record;
    if (!(await services.store.outcomes.get(conversationId))) throw new HttpError('not_found', 'This conversation has no outcome yet');
    throw new HttpError('not_handed_off', 'Only a conversation handed over to a person has a handoff reason');
  });
}
