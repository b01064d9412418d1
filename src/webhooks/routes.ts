// GET /api/v1/webhooks/deliveries (service secret): the configured endpoints, counts, the latest attempts, deliveries
// waiting for a retry and dead letters. The dashboard's "Webhook deliveries" card reads it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requireServiceSecret } from '../http/auth.ts';
import { parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import type { Webhooks } from './delivery.ts';

const Query = z.strictObject({ limit: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(100)).optional() });

export async function webhooksPlugin(app: FastifyInstance, o: { services: Services; webhooks: Webhooks; auth?: (request: FastifyRequest) => Promise<void> }) {
  // The service secret, or (wired) a signed-in person's session or key: the dashboard reads the deliveries.
  const onRequest = o.auth ?? requireServiceSecret(() => o.services.secret);
  app.get('/api/v1/webhooks/deliveries', { onRequest }, async (request) => {
    const q = parseOr400(Query, request.query, 'query');
    return o.webhooks.deliveries(q.limit ?? 50);
  });
}
