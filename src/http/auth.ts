import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { unauthorized } from './errors.ts';

const sha256 = (value: string) => hash('sha256', value, 'buffer');

/** Constant-time comparison that does not leak the length either (both sides hashed first). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b)) && a.length === b.length;
}

export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(value.trim());
  return m ? m[1] : undefined;
}

/**
 * Whether `candidate` is the secret whose SHA-256 is `digest`: the candidate's hash against the
 * secret's, in constant time (the same comparison as `safeEqual`, with the secret's side hashed once).
 */
function matches(candidate: unknown, secret: string, digest: Buffer): boolean {
  if (typeof candidate !== 'string' || candidate.length === 0) return false;
  return timingSafeEqual(sha256(candidate), digest) && candidate.length === secret.length;
}

/**
 * The service secret, as `Authorization: Bearer` or `x-service-secret`, against the secret whose SHA-256 is
 * `digest`. Every candidate is compared (no early exit).
 */
function hasSecret(headers: FastifyRequest['headers'], secret: string, digest: Buffer): boolean {
  let ok = matches(bearerToken(headers.authorization), secret, digest);
  const alt = headers['x-service-secret'];
  if (Array.isArray(alt)) for (const c of alt) ok = matches(c, secret, digest) || ok;
  else ok = matches(alt, secret, digest) || ok;
  return ok;
}

/** The service secret, as `Authorization: Bearer` or `x-service-secret`. */
export function hasServiceSecret(headers: FastifyRequest['headers'], secret: string): boolean {
  return hasSecret(headers, secret, sha256(secret));
}

/**
 * A fastify onRequest hook that refuses requests without the service secret. The secret is read on every
 * request; its hash is computed again only when it changes, so a request hashes just its own candidate.
 */
export function requireServiceSecret(secret: () => string) {
  let known = { secret: '', digest: sha256('') };
  return async (request: FastifyRequest) => {
    const current = secret();
    if (current !== known.secret) known = { secret: current, digest: sha256(current) };
    if (!hasSecret(request.headers, current, known.digest)) throw unauthorized('Missing or invalid service secret');
  };
}
