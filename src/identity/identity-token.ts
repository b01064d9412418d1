// Identity tokens: JWTs (RFC 7519) the integrator's backend signs with HS256 and a secret it shares with Parley
// (`identity.jwt_secret`, and `identity.jwt_previous_secret` during a rotation). One algorithm only, so `alg`
// confusion (`none`, an RS/ES header over an HMAC key) cannot work; `sub` (the customer's externalId) and `exp` are
// required, and an `exp` further ahead than `identity.jwt_max_lifetime_hours` is refused. Checked in constant time
// against the injected clock, with no store access.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';

export interface IdentityClaims {
  externalId: string;
  email?: string;
  name?: string;
  phone?: string;
  /** `exp`, in ms. */
  expiresAt: number;
}

export type IdentityRefusal =
  'not_configured' | 'malformed' | 'bad_header' | 'bad_signature' | 'bad_claims' | 'no_exp' | 'expired' | 'too_long_lived' | 'not_yet_valid';
export type IdentityCheck = { ok: true; claims: IdentityClaims } | { ok: false; reason: IdentityRefusal };

export interface IdentityTokens {
  /** True when a secret is configured (identity tokens are accepted at all). */
  readonly enabled: boolean;
  verify(token: string): IdentityCheck;
}

const B64URL = /^[A-Za-z0-9_-]+$/;
/** Header members a JWT library may write for HS256; anything else (`jku`, `jwk`, `crit`, …) is refused. */
const HEADER_KEYS = new Set(['alg', 'typ', 'kid']);
const MAX_SUB = 256;
const MAX_CLAIM = 320;

/** A compact JWS looks like this; Parley's own session tokens start with `v1.`. */
export const looksLikeJwt = (token: string) => token.split('.').length === 3 && !token.startsWith('v1.');

function decodeJson(part: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const optionalString = (v: unknown, max: number) => v === undefined || (typeof v === 'string' && v.length > 0 && v.length <= max);
const optionalNumber = (v: unknown) => v === undefined || (typeof v === 'number' && Number.isFinite(v));

function headerOk(header: Record<string, unknown>): boolean {
  if (header.alg !== 'HS256') return false;
  if (header.typ !== undefined && (typeof header.typ !== 'string' || header.typ.toUpperCase() !== 'JWT')) return false;
  return Object.keys(header).every((k) => HEADER_KEYS.has(k));
}

export function createIdentityTokens(o: { secrets: string[]; maxLifetimeHours: number; clock: Clock }): IdentityTokens {
  const keys = o.secrets.filter(Boolean).map((s) => Buffer.from(s, 'utf8'));
  const maxLifetimeMs = o.maxLifetimeHours * 3_600_000;

  // Every key is tried, whichever matches: the time taken does not say which one did.
  const signedByAKey = (signingInput: string, signature: Buffer): boolean => {
    let ok = false;
    for (const key of keys) {
      const expected = createHmac('sha256', key).update(signingInput).digest();
      if (signature.length === expected.length && timingSafeEqual(signature, expected)) ok = true;
    }
    return ok;
  };

  return {
    enabled: keys.length > 0,
    verify(token) {
      if (keys.length === 0) return { ok: false, reason: 'not_configured' };
      const parts = typeof token === 'string' ? token.split('.') : [];
      if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) return { ok: false, reason: 'malformed' };
      const [h, p, s] = parts;
      const header = decodeJson(h);
      if (!header) return { ok: false, reason: 'malformed' };
      if (!headerOk(header)) return { ok: false, reason: 'bad_header' };
      if (!signedByAKey(`${h}.${p}`, Buffer.from(s, 'base64url'))) return { ok: false, reason: 'bad_signature' };
      const c = decodeJson(p);
      if (!c) return { ok: false, reason: 'malformed' };
      if (c.exp === undefined) return { ok: false, reason: 'no_exp' };
      const valid =
        typeof c.sub === 'string' &&
        c.sub.length > 0 &&
        c.sub.length <= MAX_SUB &&
        typeof c.exp === 'number' &&
        Number.isFinite(c.exp) &&
        optionalNumber(c.iat) &&
        optionalNumber(c.nbf) &&
        optionalString(c.email, MAX_CLAIM) &&
        optionalString(c.name, MAX_CLAIM) &&
        optionalString(c.phone, 32);
      if (!valid) return { ok: false, reason: 'bad_claims' };
      const now = o.clock.now();
      const expiresAt = (c.exp as number) * 1000;
      if (now >= expiresAt) return { ok: false, reason: 'expired' };
      if (expiresAt - now > maxLifetimeMs) return { ok: false, reason: 'too_long_lived' };
      if (typeof c.nbf === 'number' && c.nbf * 1000 > now) return { ok: false, reason: 'not_yet_valid' };
      const claims: IdentityClaims = { externalId: c.sub as string, expiresAt };
      for (const k of ['email', 'name', 'phone'] as const) if (typeof c[k] === 'string') claims[k] = c[k];
      return { ok: true, claims };
    },
  };
}
