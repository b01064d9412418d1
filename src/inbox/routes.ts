// The inbox API (/api/v1/inbox/…): for signed-in agents only (a session with its CSRF token on every change, or a
// personal API key; the service secret is refused: every action here is a person's). The page is at /inbox.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import type { AgentSessions } from '../agents/sessions.ts';
import { agentOf, requirePrincipal } from '../agents/principal.ts';
import { readCookie, SESSION_COOKIE } from '../agents/cookies.ts';
import type { Clock } from '../clock.ts';
import { HttpError, parseOr400, sendError } from '../http/errors.ts';
import type { Store } from '../store/repos.ts';
import type { InboxLive } from './live.ts';
import type { Actor, InboxService } from './service.ts';
import { listView, type ViewDeps } from './views.ts';
import { AssignRequest, ListQuery, NoteRequest, ReplyRequest, SavedReplyRequest, TypingRequest, type AgentPresence, type SavedReplyView } from './wire.ts';

const Params = z.object({ conversationId: z.string().min(1).max(256) });
const ReplyParams = z.object({ id: z.string().min(1).max(64) });

export interface InboxRoutesOptions {
  store: Store;
  clock: Clock;
  secret: () => string;
  sessions: AgentSessions;
  service: InboxService;
  views: ViewDeps;
  live: InboxLive;
}

const actorOf = (request: FastifyRequest): Actor => {
  const a = agentOf(request);
  return { agentId: a.agentId, name: a.name, role: a.role };
};

export async function inboxRoutesPlugin(app: FastifyInstance, o: InboxRoutesOptions) {
  const { service, store } = o;
  const onRequest = requirePrincipal({ secret: o.secret, sessions: o.sessions, agentsOnly: true });
  const id = (request: FastifyRequest) => parseOr400(Params, request.params, 'params').conversationId;

  app.get('/api/v1/inbox/conversations', { onRequest }, async (request, reply) => {
    const q = parseOr400(ListQuery, request.query, 'query');
    reply.header('cache-control', 'no-store');
    return listView(o.views, actorOf(request).agentId, q.view, q.q || undefined);
  });
  app.get('/api/v1/inbox/conversations/:conversationId', { onRequest }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return service.whole(actorOf(request), id(request));
  });
  app.post('/api/v1/inbox/conversations/:conversationId/claim', { onRequest }, async (request) => ({
    thread: await service.claim(actorOf(request), id(request)),
  }));
  app.post('/api/v1/inbox/conversations/:conversationId/assign', { onRequest }, async (request) => {
    const body = parseOr400(AssignRequest, request.body, 'body');
    const to = await store.agents.get(body.agentId);
    if (!to || to.disabled) throw new HttpError('agent_not_found', 'No active agent with this id');
    return { thread: await service.assign(actorOf(request), id(request), { agentId: to.agentId, name: to.name }) };
  });
  app.post('/api/v1/inbox/conversations/:conversationId/messages', { onRequest }, async (request, reply) => {
    const body = parseOr400(ReplyRequest, request.body, 'body');
    return reply.code(201).send(await service.reply(actorOf(request), id(request), body.text, body.id));
  });
  app.post('/api/v1/inbox/conversations/:conversationId/notes', { onRequest }, async (request, reply) => {
    const body = parseOr400(NoteRequest, request.body, 'body');
    return reply.code(201).send(await service.note(actorOf(request), id(request), body.text));
  });
  app.post('/api/v1/inbox/conversations/:conversationId/typing', { onRequest }, async (request) => {
    const body = parseOr400(TypingRequest, request.body, 'body');
    return { shown: await service.typing(actorOf(request), id(request), body.on) };
  });
  app.post('/api/v1/inbox/conversations/:conversationId/release', { onRequest }, async (request) => ({
    thread: await service.close(actorOf(request), id(request), false),
  }));
  app.post('/api/v1/inbox/conversations/:conversationId/resolve', { onRequest }, async (request) => ({
    thread: await service.close(actorOf(request), id(request), true),
  }));
  app.post('/api/v1/inbox/conversations/:conversationId/read', { onRequest }, async (request, reply) => {
    await service.read(actorOf(request), id(request));
    return reply.code(204).send();
  });

  app.get('/api/v1/inbox/agents', { onRequest }, async (): Promise<{ items: AgentPresence[] }> => {
    const online = new Map(o.live.presence().map((p) => [p.agentId, p.presence]));
    const items = (await store.agents.list())
      .filter((a) => !a.disabled)
      .map((a) => ({ agentId: a.agentId, name: a.name, presence: online.get(a.agentId) ?? ('offline' as const) }));
    return { items };
  });

  app.get('/api/v1/inbox/saved-replies', { onRequest }, async (): Promise<{ items: SavedReplyView[] }> => ({ items: await store.agentInbox.savedReplies() }));
  app.post('/api/v1/inbox/saved-replies', { onRequest }, async (request, reply) => {
    const body = parseOr400(SavedReplyRequest, request.body, 'body');
    const a = actorOf(request);
    const saved = {
      id: `sr_${randomUUID()}`,
      shortcut: body.shortcut,
      text: body.text,
      createdBy: { agentId: a.agentId, name: a.name },
      createdAt: o.clock.now(),
    };
    if (!(await store.agentInbox.putSavedReply(saved))) throw new HttpError('shortcut_taken', `Another saved reply has the shortcut /${body.shortcut}`);
    return reply.code(201).send(saved);
  });
  app.delete('/api/v1/inbox/saved-replies/:id', { onRequest }, async (request, reply) => {
    const { id: replyId } = parseOr400(ReplyParams, request.params, 'params');
    if (!(await store.agentInbox.removeSavedReply(replyId))) throw new HttpError('saved_reply_not_found', 'No saved reply with this id');
    return reply.code(204).send();
  });
}

/** The same origin as the request's Host, or no Origin at all (not a browser: the cookie still decides). */
export function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (!origin) return true;
  try {
    return new URL(origin).host.toLowerCase() === String(request.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

/** The live socket, in the WebSocket scope: the session cookie (no CSRF token: a socket changes nothing), same origin. */
export async function inboxLivePlugin(app: FastifyInstance, o: { sessions: AgentSessions; live: InboxLive }) {
  app.route({
    method: 'GET',
    url: '/api/v1/inbox/live',
    onRequest: async (request, reply) => {
      if (!sameOrigin(request)) return sendError(reply, 'forbidden_origin', 'The inbox feed is for pages of this server only');
      const token = readCookie(request.headers.cookie, SESSION_COOKIE);
      const hit = token ? await o.sessions.session(token) : undefined;
      if (!hit) return sendError(reply, 'unauthorized', 'Sign in first');
      request.principal = { kind: 'agent', agentId: hit.agent.agentId, role: hit.agent.role, name: hit.agent.name, via: 'session' };
    },
    handler: (_request, reply) => sendError(reply.header('upgrade', 'websocket'), 'upgrade_required', 'Connect with a WebSocket upgrade'),
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      const a = agentOf(request);
      o.live.attach(socket, { agentId: a.agentId, name: a.name });
    },
  });
}
