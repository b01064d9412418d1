// Rate limits on the sign-in routes: per client IP on both, per email on
// /auth/magic-link. Over the limit → 429 with Retry-After.
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.ts';
import { createRateLimiter } from '../limits/rate-limiter.ts';
import type { Services } from '../services.ts';

export function createAuthLimits(services: Services) {
  const { identity } = services.config;
  const perIp = createRateLimiter({ perMinute: identity.rate_limit_per_ip_per_minute, now: services.clock.now });
  const perEmail = createRateLimiter({ perMinute: identity.rate_limit_per_email_per_minute, now: services.clock.now });
  const check = (r: ReturnType<typeof perIp.take>, what: string) => {
    if (r.ok) return;
    const seconds = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
    throw new HttpError(429, 'rate_limited', `Too many ${what}; try again in ${seconds} s`, { 'retry-after': String(seconds) });
  };
  return {
    magicLink(request: FastifyRequest, email?: string) {
      check(perIp.take(`ml:${request.ip}`), 'sign-in requests from this address');
      if (email) check(perEmail.take(email.toLowerCase()), 'sign-in links for this email');
    },
    verify(request: FastifyRequest) {
      check(perIp.take(`v:${request.ip}`), 'verification attempts from this address');
    },
  };
}
