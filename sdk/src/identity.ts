// Identity tokens for the widget: an HS256 JWT (RFC 7519) your backend signs with the secret it shares with
// Parley (`identity.jwt_secret`), so a signed-in customer's widget needs no round trip to Parley per page view.
import { createHmac } from 'node:crypto';

export interface IdentityFields {
  /** Your own id of the customer (the JWT's `sub`). */
  externalId: string;
  email?: string;
  name?: string;
  /** E.164, e.g. +15550001111. */
  phone?: string;
}

export interface SignIdentityOptions {
  /** The secret Parley knows as `identity.jwt_secret` (env SERVICE_IDENTITY_SECRET). */
  secret: string;
  /** Seconds until the token expires (Parley refuses more than `identity.jwt_max_lifetime_hours`). Default 3600. */
  expiresIn?: number;
  /** The time to sign at, in ms (default: now). */
  now?: number;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Signs `fields` as an identity token: pass it to the widget as `authToken` (`customerId` is then optional). */
export function signIdentity(fields: IdentityFields, options: SignIdentityOptions): string {
  if (!fields.externalId) throw new Error('signIdentity: externalId is required');
  if (!options.secret) throw new Error('signIdentity: secret is required');
  const expiresIn = options.expiresIn ?? 3600;
  if (!Number.isFinite(expiresIn) || expiresIn <= 0) throw new Error('signIdentity: expiresIn must be a positive number of seconds');
  const iat = Math.floor((options.now ?? Date.now()) / 1000);
  const claims: Record<string, unknown> = { sub: fields.externalId, iat, exp: iat + Math.floor(expiresIn) };
  for (const k of ['email', 'name', 'phone'] as const) if (fields[k] !== undefined) claims[k] = fields[k];
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', options.secret).update(input).digest('base64url')}`;
}
