// The agent API from your backend (human handoff): reply as a person, give a conversation back to the assistant, hand
// one over, read one, list the agent inbox. HTTP calls to Parley with the `url` and `secret` given to `listen`.
import {
  AgentReplyResponse,
  ConversationList,
  ConversationStateResponse,
  ConversationView,
  type AgentAuthor,
  type AgentReplyRequest,
  type HandoffRequest,
} from './agent-api.ts';
import { httpBaseUrl } from './media.ts';
import type { z } from 'zod';

export class ParleyApiError extends Error {
  constructor(
    message: string,
    /** HTTP status (0: Parley not reached). */
    readonly status: number,
    /** Parley's error code: `not_handed_off`, `outside_window`, `conversation_not_found`, `validation_failed`, … */
    readonly code: string,
  ) {
    super(message);
    this.name = 'ParleyApiError';
  }
}

export interface Conversations {
  /**
   * Sends `text` to the customer as `author` (the widget shows the name). Only while a person has the conversation.
   * `idempotencyKey`: pass the same one when retrying: the message is stored and shown once, the retry answered alike.
   */
  reply(conversationId: string, text: string, author: AgentAuthor, o?: { idempotencyKey?: string }): Promise<AgentReplyResponse>;
  /** Gives the conversation back to the assistant. */
  release(conversationId: string): Promise<ConversationStateResponse>;
  /** Hands the conversation to a person (as the model's `handoff` tool does). */
  handoff(conversationId: string, reason?: string): Promise<ConversationStateResponse>;
  /** The conversation, its customer and its last `limit` (50) messages; `before` pages back. */
  get(conversationId: string, o?: { before?: number; limit?: number }): Promise<ConversationView>;
  /** The agent inbox: conversations a person has, most recently handed over first. */
  withHuman(o?: { before?: string; limit?: number }): Promise<ConversationList>;
}

export function createConversations(target: () => { url: string; secret: string } | undefined): Conversations {
  const call = async <S extends z.ZodType>(schema: S, method: string, path: string, body?: AgentReplyRequest | HandoffRequest): Promise<z.infer<S>> => {
    const t = target();
    if (!t) throw new ParleyApiError('Call listen() first: the conversations API uses its url and secret', 0, 'not_listening');
    let res: Response;
    try {
      res = await fetch(`${httpBaseUrl(t.url)}${path}`, {
        method,
        headers: body === undefined ? { authorization: `Bearer ${t.secret}` } : { authorization: `Bearer ${t.secret}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new ParleyApiError(`Could not reach Parley: ${(err as Error).message}`, 0, 'network_error');
    }
    const json = (await res.json().catch(() => ({}))) as { error?: { code?: unknown; message?: unknown } };
    if (!res.ok) {
      const e = json.error ?? {};
      throw new ParleyApiError(
        typeof e.message === 'string' ? e.message : `HTTP ${res.status}`,
        res.status,
        typeof e.code === 'string' ? e.code : 'http_error',
      );
    }
    return schema.parse(json);
  };
  const id = (conversationId: string) => encodeURIComponent(conversationId);
  const query = (o: Record<string, string | number | undefined>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(o)) if (v !== undefined) q.set(k, String(v));
    const s = q.toString();
    return s ? `?${s}` : '';
  };
  return {
    reply: (conversationId, text, author, o = {}) =>
      call(
        AgentReplyResponse,
        'POST',
        `/conversations/${id(conversationId)}/messages`,
        o.idempotencyKey === undefined ? { text, author } : { text, author, id: o.idempotencyKey },
      ),
    release: (conversationId) => call(ConversationStateResponse, 'POST', `/conversations/${id(conversationId)}/release`, {}),
    handoff: (conversationId, reason) =>
      call(ConversationStateResponse, 'POST', `/conversations/${id(conversationId)}/handoff`, reason === undefined ? {} : { reason }),
    get: (conversationId, o = {}) => call(ConversationView, 'GET', `/conversations/${id(conversationId)}${query(o)}`),
    withHuman: (o = {}) => call(ConversationList, 'GET', `/conversations${query({ state: 'withHuman', before: o.before, limit: o.limit })}`),
  };
}
