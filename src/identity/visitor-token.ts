// Visitor tokens: what a visitor's widget keeps (localStorage) to come back as the same visitor.
// `vt1.<base64url(JSON {sub, iat})>.<base64url(HMAC-SHA256)>`, keyed by a key derived from the service secret,
// checked in constant time against the injected clock; long-lived (`identity.visitor_token_ttl_days`).
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';

export type VisitorTokenCheck = { ok: true; customerId: string } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

export interface VisitorTokens {
  issue(customerId: string): string;
  verify(token: string): VisitorTokenCheck;
}

export function createVisitorTokens(o: { serviceSecret: string; ttlDays: number; clock: Clock }): VisitorTokens {
  const key = Buffer.from(hkdfSync('sha256', o.serviceSecret, 'parley', 'parley visitor tokens', 32));
  const ttlMs = o.ttlDays * 86_400_000;
  const sign = (payload: string) => createHmac('sha256', key).update(`vt1.${payload}`).digest();
  return {
    issue(customerId) {
      const payload = Buffer.from(JSON.stringify({ sub: customerId, iat: o.clock.now() })).toString('base64url');
      return `vt1.${payload}.${sign(payload).toString('base64url')}`;
    },
    verify(token) {
      const parts = typeof token === 'string' ? token.split('.') : [];
      if (parts.length !== 3 || parts[0] !== 'vt1' || !parts[1] || !parts[2]) return { ok: false, reason: 'malformed' };
      const given = Buffer.from(parts[2], 'base64url');
      const expected = sign(parts[1]);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
      let claims: { sub?: unknown; iat?: unknown };
      try {
        claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
      } catch {
        return { ok: false, reason: 'malformed' };
      }
      if (typeof claims.sub !== 'string' || typeof claims.iat !== 'number') return { ok: false, reason: 'malformed' };
      if (o.clock.now() >= claims.iat + ttlMs) return { ok: false, reason: 'expired' };
      return { ok: true, customerId: claims.sub };
    },
  };
}
