// Who makes a request to the agent API: a system with the service secret, or an agent with a session cookie (plus
// the CSRF token on every state-changing request) or a personal API key (`Authorization: Bearer pk_…`; no CSRF: a
// browser never sends it by itself). One hook decides and sets `request.principal`; routes read it.
import type { FastifyRequest } from 'fastify';
import { bearerToken, hasServiceSecret } from '../http/auth.ts';
import { HttpError, unauthorized } from '../http/errors.ts';
import type { AgentAccount, AgentRole } from '../store/model.ts';
import { readCookie, SESSION_COOKIE } from './cookies.ts';
import type { AgentSessions, SessionHit } from './sessions.ts';

export type Principal = { kind: 'service' } | { kind: 'agent'; agentId: string; role: AgentRole; name: string; via: 'session' | 'key' };

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the agent auth hook (src/agents/principal.ts). */
    principal?: Principal;
    /** The session the request came with, when it came with one. */
    agentSession?: SessionHit;
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export const csrfFailed = () => new HttpError('csrf_failed', 'A request made with the session cookie must send the CSRF token of the session in X-CSRF-Token');

const asAgent = (a: AgentAccount, via: 'session' | 'key'): Principal => ({ kind: 'agent', agentId: a.agentId, role: a.role, name: a.name, via });

export interface PrincipalOptions {
  secret: () => string;
  sessions: AgentSessions;
  /** Only admins (and the service secret). */
  adminOnly?: boolean;
  /** Refuse the service secret (routes about "me"). */
  agentsOnly?: boolean;
}

async function identify(request: FastifyRequest, o: PrincipalOptions): Promise<Principal> {
  if (!o.agentsOnly && hasServiceSecret(request.headers, o.secret())) return { kind: 'service' };
  const bearer = bearerToken(request.headers.authorization);
  if (bearer?.startsWith('pk_')) {
    const owner = await o.sessions.keyOwner(bearer);
    if (!owner) throw unauthorized('Unknown or revoked API key');
    return asAgent(owner, 'key');
  }
  const token = readCookie(request.headers.cookie, SESSION_COOKIE);
  const hit = token ? await o.sessions.session(token) : undefined;
  if (!hit) throw unauthorized(o.agentsOnly ? 'Sign in first' : 'Sign in, or send the service secret');
  if (!SAFE.has(request.method)) {
    const header = request.headers['x-csrf-token'];
    if (!o.sessions.csrfMatches(hit, Array.isArray(header) ? header[0] : header)) throw csrfFailed();
  }
  request.agentSession = hit;
  return asAgent(hit.agent, 'session');
}

/** A fastify hook that sets `request.principal` or refuses the request (401; 403 `csrf_failed`; 403 for admins only). */
export function requirePrincipal(o: PrincipalOptions) {
  return async (request: FastifyRequest) => {
    const principal = await identify(request, o);
    if (o.adminOnly && principal.kind === 'agent' && principal.role !== 'admin') throw new HttpError('forbidden', 'Only admins may do this');
    request.principal = principal;
  };
}

/** The agent behind a request that passed `requirePrincipal` with `agentsOnly`. */
export function agentOf(request: FastifyRequest): Extract<Principal, { kind: 'agent' }> {
  const p = request.principal;
  if (p?.kind !== 'agent') throw unauthorized('Sign in first');
  return p;
}
