// The session cookie: `HttpOnly`, `SameSite=Lax`, `Path=/`, and `Secure` when the request came over https (directly,
// or per `X-Forwarded-Proto` when `server.trust_proxy` is set: fastify's `request.protocol` reads it then).
import type { FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'parley_session';

/** The value of cookie `name` in a Cookie header, or undefined. Values are not decoded (ours are base64url). */
export function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  const value = Array.isArray(header) ? header.join('; ') : header;
  if (!value) return undefined;
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const attributes = (request: FastifyRequest) => `Path=/; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`;

/** Set-Cookie for a new session (a session cookie with an explicit Max-Age up to the session's absolute end). */
export function sessionCookie(request: FastifyRequest, token: string, maxAgeMs: number): string {
  return `${SESSION_COOKIE}=${token}; ${attributes(request)}; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}`;
}

/** Set-Cookie that removes the session cookie. */
export const clearedCookie = (request: FastifyRequest): string => `${SESSION_COOKIE}=; ${attributes(request)}; Max-Age=0`;
