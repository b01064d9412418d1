// POST /auth/magic-link (service secret) and GET /auth/verify?token= (the
// token is the credential: the link is opened by the customer, who does not
// have the service secret — so the spec's "protected" means "by the token").
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ANONYMOUS_PREFIX, isAnonymousExternalId } from '../customers/anonymous.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import { isVisitorExternalId, VISITOR_PREFIX } from '../store/model.ts';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import type { MagicLinks } from './magic-links.ts';
import type { SessionTokens } from './session-token.ts';

const MagicLinkBody = z.object({
  email: z.string().email().max(320),
  externalId: z
    .string()
    .min(1)
    .max(256)
    .refine((id) => !isAnonymousExternalId(id), `must not start with "${ANONYMOUS_PREFIX}" (reserved for anonymous widget visitors)`)
    .refine((id) => !isVisitorExternalId(id), `must not start with "${VISITOR_PREFIX}" (reserved for visitors)`),
});
const VerifyQuery = z.object({ token: z.string().min(1).max(512) });

export async function identityPlugin(
  app: FastifyInstance,
  o: {
    services: Services;
    customers: CustomerRepo;
    tokens: SessionTokens;
    links: MagicLinks;
    limits?: { magicLink?: (request: import('fastify').FastifyRequest, email?: string) => void; verify?: (request: import('fastify').FastifyRequest) => void };
  },
) {
  const { services } = o;

  app.post('/auth/magic-link', { onRequest: requireServiceSecret(() => services.secret) }, async (request) => {
    const body = parseOr400(MagicLinkBody, request.body, 'body');
    o.limits?.magicLink?.(request, body.email);
    const token = await o.links.create(body);
    services.telemetry.event({ type: 'auth.magic_link.created', customerExternalId: body.externalId, data: {} });
    const base = (services.config.server.base_url ?? '').replace(/\/$/, '');
    // `token` for your own sign-in page (the link you mail); `url` is Parley's verify URL, for your server only.
    return {
      token,
      url: `${base}/auth/verify?token=${token}`,
      expiresAt: new Date(services.clock.now() + services.config.identity.magic_link_ttl_minutes * 60_000).toISOString(),
    };
  });

  app.get('/auth/verify', async (request, reply) => {
    o.limits?.verify?.(request);
    const { token } = parseOr400(VerifyQuery, request.query, 'query');
    reply.header('cache-control', 'no-store');
    const result = await o.links.consume(token);
    if (!result.ok) {
      request.log.debug({ reason: result.reason }, 'magic link refused');
      throw new HttpError('invalid_token', 'This sign-in link is invalid, already used, or expired');
    }
    // Never a record an anonymous visitor created (links for `anon:` ids are refused when asked for; this covers older ones).
    if (isAnonymousExternalId(result.externalId)) throw new HttpError('invalid_token', 'This sign-in link is invalid, already used, or expired');
    const customer = await o.customers.upsert({ externalId: result.externalId, email: result.email });
    services.telemetry.event({ type: 'auth.verified', customerId: customer.customerId, customerExternalId: customer.externalId, data: {} });
    return {
      customerId: customer.customerId,
      externalId: customer.externalId,
      email: customer.email ?? result.email,
      sessionToken: o.tokens.issue(customer.customerId),
    };
  });
}
