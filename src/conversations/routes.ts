// The agent API (human handoff; service secret): hand a conversation to a person, reply as that person, give it back
// to the assistant, read a conversation, list the agent inbox. Schemas: sdk/src/agent-api.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  AgentReplyRequest,
  HandoffRequest,
  IdempotencyKey,
  type ConversationList,
  type ConversationMessage,
  type ConversationView,
} from '../../sdk/src/agent-api.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import { insideWhatsAppWindow } from '../customers/whatsapp-window.ts';
import type { Services } from '../services.ts';
import type { ConversationSummary, MessageRecord } from '../store/model.ts';
import type { ConversationHost, HandoffResult } from './host.ts';

const digits = (max: number) => z.string().regex(/^\d+$/, 'a whole number').transform(Number).pipe(z.number().int().min(1).max(max));

const Params = z.object({ conversationId: z.string().min(1).max(256) });
const ReadQuery = z.strictObject({ before: digits(Number.MAX_SAFE_INTEGER).optional(), limit: digits(200).optional() });
const ListQuery = z.strictObject({
  state: z.literal('withHuman', { message: 'only "withHuman" conversations are listed' }),
  before: z
    .string()
    .regex(/^\d+:.+$/, 'the nextBefore of the previous page')
    .transform((v) => ({ since: Number(v.slice(0, v.indexOf(':'))), conversationId: v.slice(v.indexOf(':') + 1) }))
    .optional(),
  limit: digits(200).optional(),
});

/** What an agent reads: messages, confirmations and handoffs; tool records stay internal. */
const SHOWN = new Set(['user', 'assistant', 'agent', 'confirmation', 'handoff']);

function toMessage(seq: number, r: MessageRecord): ConversationMessage {
  const m: ConversationMessage = { id: r.id, seq, role: r.role as ConversationMessage['role'], text: r.text, at: r.at };
  if (r.role === 'agent') m.author = r.data?.author as { name: string };
  else if (r.data && (r.role === 'handoff' || r.role === 'confirmation')) m.data = r.data;
  if (r.proactive) m.proactive = true;
  return m;
}

const listItem = (c: ConversationSummary): ConversationList['items'][number] => {
  const item: ConversationList['items'][number] = { conversationId: c.conversationId, channel: c.channel, state: c.state, customerId: c.customerId };
  if (c.externalId !== undefined) item.externalId = c.externalId;
  if (c.handoff) item.handoff = c.handoff;
  if (c.lastMessageAt !== undefined) item.lastMessageAt = c.lastMessageAt;
  return item;
};

/**
 * An agent message's id: from its idempotency key (the same key in the same conversation, the same id: a retry is
 * recognised by the conversation's actor and shown once), else a new one. Hashed with the conversation id: message ids
 * are unique across conversations (a WhatsApp send's job id is made of it).
 */
function agentMessageId(conversationId: string, key: string | undefined): string {
  if (key === undefined) return `agent_${randomUUID()}`;
  return `agent_k${createHash('sha256').update(`${conversationId}\n${key}`).digest('base64url').slice(0, 32)}`;
}

function idempotencyKeyOf(header: unknown, bodyId: string | undefined): string | undefined {
  if (header === undefined) return bodyId;
  const key = parseOr400(IdempotencyKey, header, 'Idempotency-Key header');
  if (bodyId !== undefined && bodyId !== key) throw new HttpError('validation_failed', "Idempotency-Key and the body's id differ: send one of them");
  return key;
}

function refused(r: Extract<HandoffResult, { ok: false }>): never {
  if (r.code === 'not_found') throw new HttpError('conversation_not_found', 'No conversation with this id');
  throw new HttpError('not_handed_off', 'A person does not have this conversation: hand it over first (POST /conversations/{id}/handoff)');
}

export async function conversationsPlugin(
  app: FastifyInstance,
  o: { services: Services; host: ConversationHost; customers: CustomerRepo; auth?: (request: FastifyRequest) => Promise<void> },
) {
  const { services, host, customers } = o;
  const { store, clock } = services;
  // The service secret, or (wired: src/agents/principal.ts) an agent's session or key; sets `request.principal`.
  const onRequest = o.auth ?? requireServiceSecret(() => services.secret);

  app.post('/conversations/:conversationId/handoff', { onRequest }, async (request) => {
    const { conversationId } = parseOr400(Params, request.params, 'params');
    const body = parseOr400(HandoffRequest, request.body ?? {}, 'body');
    // A signed-in agent's request is theirs (telemetry and webhooks carry the id); a system's (service secret) is not.
    const p = request.principal;
    const r = await host.handoff(conversationId, body.reason, p?.kind === 'agent' ? p.agentId : undefined);
    if (!r.ok) refused(r);
    return { conversationId, state: r.state };
  });

  app.post('/conversations/:conversationId/release', { onRequest }, async (request) => {
    const { conversationId } = parseOr400(Params, request.params, 'params');
    const p = request.principal;
    const r = await host.release(conversationId, p?.kind === 'agent' ? p.agentId : undefined);
    if (!r.ok) refused(r);
    return { conversationId, state: r.state };
  });

  app.post('/conversations/:conversationId/messages', { onRequest }, async (request, reply) => {
    const { conversationId } = parseOr400(Params, request.params, 'params');
    const body = parseOr400(AgentReplyRequest, request.body, 'body');
    const record = await store.conversations.get(conversationId);
    if (!record) refused({ ok: false, code: 'not_found' });
    if (record.channel === 'whatsapp') {
      // WhatsApp's customer service window: free-form messages only within 24 h of the customer's last message.
      if (!insideWhatsAppWindow(await customers.get(record.customerId), clock.now())) {
        throw new HttpError(
          'outside_window',
          "The customer's last WhatsApp message is more than 24 hours old: WhatsApp accepts only a template message now (POST /proactive with a template)",
        );
      }
    }
    const key = idempotencyKeyOf(request.headers['idempotency-key'], body.id);
    const id = agentMessageId(conversationId, key);
    // With a key: a retry of a message already stored is answered as the first post was, and nothing is sent again.
    const storedAt = async () => (key === undefined ? undefined : (await store.history.recent(conversationId, 200, ['agent'])).find((m) => m.id === id)?.at);
    const earlier = await storedAt();
    if (earlier !== undefined) return reply.code(201).send({ id, conversationId, at: earlier });
    // A signed-in agent writes under their own name and id (telemetry and webhooks say who); a system as it says.
    const p = request.principal;
    const author = p?.kind === 'agent' ? { name: p.name, agentId: p.agentId } : body.author;
    const r = await host.agentMessage(conversationId, { id, text: body.text, author });
    if (!r.ok) refused(r);
    return reply.code(201).send({ id, conversationId, at: (await storedAt()) ?? clock.now() });
  });

  app.get('/conversations/:conversationId', { onRequest }, async (request): Promise<ConversationView> => {
    const { conversationId } = parseOr400(Params, request.params, 'params');
    const q = parseOr400(ReadQuery, request.query, 'query');
    const record = await store.conversations.get(conversationId);
    if (!record) refused({ ok: false, code: 'not_found' });
    const customer = await customers.get(record.customerId);
    const limit = q.limit ?? 50;
    // Tool records sit between the messages: read a few pages' worth until `limit` shown ones are found.
    const shown: ConversationMessage[] = [];
    let before = q.before;
    let more = true;
    while (shown.length < limit && more) {
      const page = await store.history.page(conversationId, { before, limit: limit * 2 });
      more = page.length > 0 && page[0].seq > 1;
      if (page.length === 0) break;
      before = page[0].seq;
      const kept = page.filter((p) => SHOWN.has(p.record.role)).map((p) => toMessage(p.seq, p.record));
      shown.unshift(...kept.slice(-(limit - shown.length)));
    }
    const messages = shown.slice(-limit);
    const view: ConversationView = {
      conversationId,
      channel: record.channel,
      state: record.state,
      customer: { customerId: record.customerId, externalId: customer?.externalId ?? record.externalId ?? '' },
      messages,
      nextBefore: messages.length === limit && messages[0].seq > 1 ? messages[0].seq : null,
    };
    if (customer?.email) view.customer.email = customer.email;
    if (customer?.phone) view.customer.phone = customer.phone;
    if (record.handoff) view.handoff = record.handoff;
    return view;
  });

  app.get('/conversations', { onRequest }, async (request): Promise<ConversationList> => {
    const q = parseOr400(ListQuery, request.query, 'query');
    const limit = q.limit ?? 50;
    const page = await store.conversations.withHuman({ before: q.before, limit: limit + 1 });
    const items = page.slice(0, limit).map(listItem);
    const last = page.length > limit ? page[limit - 1] : undefined;
    return { items, nextBefore: last?.handoff ? `${last.handoff.since}:${last.conversationId}` : null };
  });
}
