// Rate limits on the sign-in routes: per client IP on both, per email on
// /auth/magic-link. Over the limit → 429 with Retry-After. Magic links are for links mailed to people: a site that
// signs its customers in on every page view uses identity tokens (no round trip, no limit), and a limited
// /auth/magic-link call says so.
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.ts';
import { createRateLimiter } from '../limits/rate-limiter.ts';
import type { Services } from '../services.ts';

/** Magic links are meant to be mailed to people, not asked for on every page view. */
export const PAGE_VIEW_HINT =
  '. Magic links are for links you mail to people: to sign a customer in to the widget on each page view, sign an identity token ' +
  '(an HS256 JWT; signIdentity() in @parley/sdk) and pass it as authToken: no request to Parley, no rate limit';

export function createAuthLimits(services: Services) {
  const { identity } = services.config;
  const perIp = createRateLimiter({ perMinute: identity.rate_limit_per_ip_per_minute, now: services.clock.now });
  const perEmail = createRateLimiter({ perMinute: identity.rate_limit_per_email_per_minute, now: services.clock.now });
  const check = (r: ReturnType<typeof perIp.take>, what: string, hint = '') => {
    if (r.ok) return;
    const seconds = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
    throw new HttpError('rate_limited', `Too many ${what}; try again in ${seconds} s${hint}`, { 'retry-after': String(seconds) });
  };
  return {
    magicLink(request: FastifyRequest, email?: string) {
      check(perIp.take(`ml:${request.ip}`), 'sign-in requests from this address', PAGE_VIEW_HINT);
      if (email) check(perEmail.take(email.toLowerCase()), 'sign-in links for this email', PAGE_VIEW_HINT);
    },
    verify(request: FastifyRequest) {
      check(perIp.take(`v:${request.ip}`), 'verification attempts from this address');
    },
  };
}
