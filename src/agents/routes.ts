// The people routes (/api/v1/agents/…): sign-in, sign-out (here or everywhere), who am I, personal API keys, and
// accounts made by admins (or systems with the service secret) with a one-time set-password link.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, parseOr400 } from '../http/errors.ts';
import { publicAgent, setPasswordPath, type AgentAccounts } from './accounts.ts';
import { clearedCookie, readCookie, SESSION_COOKIE, sessionCookie } from './cookies.ts';
import type { AgentLimits } from './limits.ts';
import { agentOf, requirePrincipal } from './principal.ts';
import type { AgentSessions } from './sessions.ts';
import { CreateAgentRequest, CreateKeyRequest, SetPasswordRequest, SignInRequest, type SignedIn } from './wire.ts';
import type { Store } from '../store/repos.ts';
import type { Clock } from '../clock.ts';

const KeyParams = z.object({ keyId: z.string().min(1).max(64) });

export interface AgentRoutesOptions {
  store: Store;
  clock: Clock;
  accounts: AgentAccounts;
  sessions: AgentSessions;
  limits: AgentLimits;
  secret: () => string;
}

function linkRefused(reason: 'unknown' | 'used' | 'expired'): HttpError {
  if (reason === 'unknown') return new HttpError('link_unknown', 'This set-password link is not known: ask an admin for a new one');
  if (reason === 'used') return new HttpError('link_used', 'This set-password link was already used: ask an admin for a new one');
  return new HttpError('link_expired', 'This set-password link has expired: ask an admin for a new one');
}

export async function agentRoutesPlugin(app: FastifyInstance, o: AgentRoutesOptions) {
  const { sessions, accounts, limits } = o;
  const me = requirePrincipal({ secret: o.secret, sessions, agentsOnly: true });
  const admin = requirePrincipal({ secret: o.secret, sessions, adminOnly: true });

  app.post('/api/v1/agents/sign-in', async (request, reply): Promise<SignedIn> => {
    const body = parseOr400(SignInRequest, request.body, 'body');
    limits.signIn(request, body.email);
    const s = await sessions.signIn(body.email, body.password);
    if (!s) throw new HttpError('sign_in_failed', 'Wrong email or password');
    reply.header('set-cookie', sessionCookie(request, s.sessionToken, s.expiresAt - o.clock.now()));
    reply.header('cache-control', 'no-store');
    return { agent: publicAgent(s.agent), csrfToken: s.csrfToken, expiresAt: s.expiresAt };
  });

  app.post('/api/v1/agents/sign-out', { onRequest: me }, async (request, reply) => {
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (token) await sessions.signOut(token);
    return reply.code(204).header('set-cookie', clearedCookie(request)).send();
  });

  app.post('/api/v1/agents/sign-out-everywhere', { onRequest: me }, async (request, reply) => {
    const ended = await sessions.signOutEverywhere(agentOf(request).agentId);
    return reply.header('set-cookie', clearedCookie(request)).send({ ended });
  });

  app.get('/api/v1/agents/me', { onRequest: me }, async (request, reply): Promise<SignedIn> => {
    const account = await o.store.agents.get(agentOf(request).agentId);
    if (!account) throw new HttpError('unauthorized', 'Sign in first');
    reply.header('cache-control', 'no-store');
    const hit = request.agentSession;
    return hit ? { agent: publicAgent(account), csrfToken: sessions.csrfToken(hit), expiresAt: hit.credential.expiresAt } : { agent: publicAgent(account) };
  });

  app.post('/api/v1/agents/me/keys', { onRequest: me }, async (request, reply) => {
    const body = parseOr400(CreateKeyRequest, request.body, 'body');
    const key = await sessions.createKey(agentOf(request).agentId, body.name);
    return reply.code(201).header('cache-control', 'no-store').send(key);
  });

  app.get('/api/v1/agents/me/keys', { onRequest: me }, async (request) => ({ items: await sessions.keys(agentOf(request).agentId) }));

  app.delete('/api/v1/agents/me/keys/:keyId', { onRequest: me }, async (request, reply) => {
    const { keyId } = parseOr400(KeyParams, request.params, 'params');
    if (!(await sessions.revokeKey(agentOf(request).agentId, keyId))) throw new HttpError('key_not_found', 'You have no API key with this id');
    return reply.code(204).send();
  });

  app.post('/api/v1/agents', { onRequest: admin }, async (request, reply) => {
    const body = parseOr400(CreateAgentRequest, request.body, 'body');
    const r = await accounts.create(body);
    if (!r.ok) throw new HttpError('email_taken', 'Another account has this email');
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({ agent: publicAgent(r.agent), setPasswordUrl: setPasswordPath(r.setPasswordToken) });
  });

  app.get('/api/v1/agents', { onRequest: admin }, async () => ({ items: (await o.store.agents.list()).map(publicAgent) }));

  // The token is the credential: the person opening the link has no session yet.
  app.post('/api/v1/agents/set-password', async (request) => {
    limits.setPassword(request);
    const body = parseOr400(SetPasswordRequest, request.body, 'body');
    const r = await accounts.setPassword(body.token, body.password);
    if (!r.ok) throw linkRefused(r.reason);
    return { agent: publicAgent(r.agent) };
  });
}
