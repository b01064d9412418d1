import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { unauthorized } from './errors.ts';

/** Constant-time comparison that does not leak the length either (both sides hashed first). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(value.trim());
  return m ? m[1] : undefined;
}

/** The service secret, as `Authorization: Bearer` or `x-service-secret`. */
export function hasServiceSecret(headers: FastifyRequest['headers'], secret: string): boolean {
  const candidates = [bearerToken(headers.authorization), headers['x-service-secret']].flat().filter((v): v is string => typeof v === 'string' && v.length > 0);
  let ok = false;
  for (const c of candidates) ok = safeEqual(c, secret) || ok; // no early exit
  return ok;
}

/** A fastify onRequest hook that refuses requests without the service secret. */
export function requireServiceSecret(secret: () => string) {
  return async (request: FastifyRequest) => {
    if (!hasServiceSecret(request.headers, secret())) throw unauthorized('Missing or invalid service secret');
  };
}
