// POST /proactive and POST /proactive/opt-in (service secret). The routes
// exist whether or not proactive messaging is enabled.
import type { FastifyInstance } from 'fastify';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import { OptInRequestSchema, ProactiveRequestSchema, type ProactiveService } from './service.ts';

export async function proactivePlugin(app: FastifyInstance, o: { services: Services; proactive: ProactiveService }) {
  const onRequest = requireServiceSecret(() => o.services.secret);

  app.post('/proactive', { onRequest }, async (request) => {
    const body = parseOr400(ProactiveRequestSchema, request.body, 'body');
    return o.proactive.send(body);
  });

  app.post('/proactive/opt-in', { onRequest }, async (request) => {
    const body = parseOr400(OptInRequestSchema, request.body, 'body');
    const result = await o.proactive.setOptIn(body.customerExternalId, body.optIn);
    if (!result) throw new HttpError(404, 'unknown_customer', 'Unknown customer');
    return result;
  });
}
