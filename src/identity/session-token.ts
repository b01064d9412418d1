// Session tokens: `v1.<base64url(JSON {sub, iat, exp})>.<base64url(HMAC-SHA256)>`,
// bound to a customerId, checked in constant time against the injected clock.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';

export type TokenCheck =
  { ok: true; customerId: string; expiresAt: number } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' | 'wrong_customer' };

export interface SessionTokens {
  issue(customerId: string): string;
  verify(token: string, expectedCustomerId: string): TokenCheck;
  readonly ttlMs: number;
}

export function deriveTokenKey(tokenSecret: string, serviceSecret: string): Buffer {
  if (tokenSecret) return Buffer.from(tokenSecret, 'utf8');
  return Buffer.from(hkdfSync('sha256', serviceSecret, 'parley', 'parley session tokens', 32));
}

export function createSessionTokens(o: { tokenSecret?: string; serviceSecret: string; ttlMinutes: number; clock: Clock }): SessionTokens {
  const key = deriveTokenKey(o.tokenSecret ?? '', o.serviceSecret);
  const ttlMs = Math.round(o.ttlMinutes * 60_000);
  const sign = (payload: string) => createHmac('sha256', key).update(`v1.${payload}`).digest();

  return {
    ttlMs,
    issue(customerId) {
      const iat = o.clock.now();
      const payload = Buffer.from(JSON.stringify({ sub: customerId, iat, exp: iat + ttlMs })).toString('base64url');
      return `v1.${payload}.${sign(payload).toString('base64url')}`;
    },
    verify(token, expectedCustomerId) {
      const parts = typeof token === 'string' ? token.split('.') : [];
      if (parts.length !== 3 || parts[0] !== 'v1' || !parts[1] || !parts[2]) return { ok: false, reason: 'malformed' };
      const given = Buffer.from(parts[2], 'base64url');
      const expected = sign(parts[1]);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
      let claims: { sub?: unknown; exp?: unknown };
      try {
        claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
      } catch {
        return { ok: false, reason: 'malformed' };
      }
      if (typeof claims.sub !== 'string' || typeof claims.exp !== 'number') return { ok: false, reason: 'malformed' };
      if (o.clock.now() >= claims.exp) return { ok: false, reason: 'expired' };
      if (claims.sub !== expectedCustomerId) return { ok: false, reason: 'wrong_customer' };
      return { ok: true, customerId: claims.sub, expiresAt: claims.exp };
    },
  };
}
