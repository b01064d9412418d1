// POST /proactive and POST /proactive/opt-in (service secret). The routes
// exist whether or not proactive messaging is enabled.
import type { FastifyInstance } from 'fastify';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import { OptInRequestSchema, ProactiveRequestSchema, ProactiveUnavailableError, type ProactiveService } from './service.ts';

export async function proactivePlugin(app: FastifyInstance, o: { services: Services; proactive: ProactiveService }) {
  const onRequest = requireServiceSecret(() => o.services.secret);

  app.post('/proactive', { onRequest }, async (request) => {
    const body = parseOr400(ProactiveRequestSchema, request.body, 'body');
    try {
      return await o.proactive.send(body);
    } catch (err) {
      // Not one of the seven reasons: nothing was sent and the caller may retry.
      if (err instanceof ProactiveUnavailableError) {
        request.log.error({ err }, 'proactive send failed');
        throw new HttpError('unavailable', 'Proactive messaging is temporarily unavailable; nothing was sent');
      }
      throw err;
    }
  });

  app.post('/proactive/opt-in', { onRequest }, async (request) => {
    const body = parseOr400(OptInRequestSchema, request.body, 'body');
    const result = await o.proactive.setOptIn(body.customerExternalId, body.optIn);
    if (!result) throw new HttpError('unknown_customer', 'Unknown customer');
    return result;
  });
}
