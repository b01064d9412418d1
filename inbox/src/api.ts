// The inbox page's calls: the agent's session cookie (HttpOnly: this code never sees it) and the session's CSRF token
// on every change. Shapes are the server's own (type-only imports: no server code reaches the bundle).
import type { SignedIn } from '../../src/agents/wire.ts';
import type { AgentPresence, ConversationWhole, InboxList, SavedReplyView } from '../../src/inbox/wire.ts';

export type { SignedIn } from '../../src/agents/wire.ts';
export type * from '../../src/inbox/wire.ts';

export class Unauthorized extends Error {}

/** A refusal the agent should read (e.g. "Ada has this conversation"). */
export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrf = '';
export const setCsrf = (token: string) => (csrf = token);

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 401) throw new Unauthorized('Your session has ended: sign in again');
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as T & { error?: { code: string; message: string } }) : undefined;
  if (!res.ok) throw new Refused(res.status, parsed?.error?.code ?? 'error', parsed?.error?.message ?? `HTTP ${res.status}`);
  return parsed as T;
}

const conv = (id: string) => `/api/v1/inbox/conversations/${encodeURIComponent(id)}`;

export const api = {
  me: async (): Promise<SignedIn | undefined> => {
    const res = await fetch('/api/v1/agents/me');
    return res.ok ? ((await res.json()) as SignedIn) : undefined;
  },
  signIn: async (email: string, password: string) => {
    const res = await fetch('/api/v1/agents/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const body = (await res.json()) as SignedIn & { error?: { message: string } };
    return res.ok ? { ok: true as const, person: body } : { ok: false as const, message: body.error?.message ?? `HTTP ${res.status}` };
  },
  signOut: () => call<void>('POST', '/api/v1/agents/sign-out'),
  list: (view: string, q: string) => call<InboxList>('GET', `/api/v1/inbox/conversations?view=${view}${q ? `&q=${encodeURIComponent(q)}` : ''}`),
  whole: (id: string) => call<ConversationWhole>('GET', conv(id)),
  act: (id: string, action: 'claim' | 'release' | 'resolve' | 'read') => call<unknown>('POST', `${conv(id)}/${action}`),
  /** The agent API's handoff (a person asks for it: their agentId is recorded), then the conversation can be claimed. */
  handoff: (id: string, reason: string) => call<unknown>('POST', `/conversations/${encodeURIComponent(id)}/handoff`, { reason }),
  assign: (id: string, agentId: string) => call<unknown>('POST', `${conv(id)}/assign`, { agentId }),
  reply: (id: string, text: string, clientId: string) => call<unknown>('POST', `${conv(id)}/messages`, { text, id: clientId }),
  note: (id: string, text: string) => call<unknown>('POST', `${conv(id)}/notes`, { text }),
  typing: (id: string, on: boolean) => call<unknown>('POST', `${conv(id)}/typing`, { on }),
  agents: () => call<{ items: AgentPresence[] }>('GET', '/api/v1/inbox/agents'),
  /** Admins: a new account and its one-time set-password link. */
  createAgent: (name: string, email: string, role: 'agent' | 'admin') =>
    call<{ agent: { agentId: string }; setPasswordUrl: string }>('POST', '/api/v1/agents', { name, email, role }),
  savedReplies: () => call<{ items: SavedReplyView[] }>('GET', '/api/v1/inbox/saved-replies'),
  saveReply: (shortcut: string, text: string) => call<SavedReplyView>('POST', '/api/v1/inbox/saved-replies', { shortcut, text }),
};
