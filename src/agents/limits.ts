// Sign-in attempts, limited per account (the email, in any case) and per client IP; set-password attempts per IP.
// Over the limit → 429 `rate_limited` with Retry-After and `retryAfterMs`. Token buckets in memory, per process.
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { HttpError } from '../http/errors.ts';
import { createRateLimiter } from '../limits/rate-limiter.ts';

export interface AgentLimits {
  signIn(request: FastifyRequest, email: string): void;
  setPassword(request: FastifyRequest): void;
}

export function createAgentLimits(o: { perAccountPerMinute: number; perIpPerMinute: number; clock: Clock }): AgentLimits {
  const perAccount = createRateLimiter({ perMinute: o.perAccountPerMinute, now: o.clock.now });
  const perIp = createRateLimiter({ perMinute: o.perIpPerMinute, now: o.clock.now });
  const check = (r: ReturnType<typeof perIp.take>, what: string) => {
    if (r.ok) return;
    const seconds = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
    throw new HttpError('rate_limited', `Too many ${what}; try again in ${seconds} s`, { 'retry-after': String(seconds) }, { retryAfterMs: r.retryAfterMs });
  };
  return {
    signIn(request, email) {
      check(perIp.take(`in:${request.ip}`), 'sign-in attempts from this address');
      check(perAccount.take(email.toLowerCase()), 'sign-in attempts for this account');
    },
    setPassword(request) {
      check(perIp.take(`pw:${request.ip}`), 'set-password attempts from this address');
    },
  };
}
