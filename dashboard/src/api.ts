// The dashboard reads the protected telemetry API as a signed-in person (the session cookie, HttpOnly: this code
// never sees it) or, for operators, with the service secret typed in, kept only in this tab's sessionStorage.
// Record shapes are the server's own (type-only imports: no server code reaches the bundle).
import type { SignedIn } from '../../src/agents/wire.ts';
export type { SignedIn } from '../../src/agents/wire.ts';
export type { Summary } from '../../src/telemetry/summary.ts';
export type { TelemetryEvent as EventRecord, TurnCallRecord as TurnCall } from '../../src/telemetry/types.ts';

const KEY = 'parley.secret';

export class Unauthorized extends Error {}

export const secret = {
  get: () => sessionStorage.getItem(KEY) ?? '',
  set: (s: string) => sessionStorage.setItem(KEY, s),
  clear: () => sessionStorage.removeItem(KEY),
};

export async function api<T>(path: string): Promise<T> {
  const s = secret.get();
  const res = await fetch(path, { headers: s ? { authorization: `Bearer ${s}` } : {} });
  if (res.status === 401) throw new Unauthorized(s ? 'The service secret was refused' : 'Your session has ended: sign in again');
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** A file the server sends as an attachment: its bytes and the name it gives (else `fallback`). */
export async function download(path: string, fallback: string): Promise<{ blob: Blob; name: string }> {
  const s = secret.get();
  const res = await fetch(path, { headers: s ? { authorization: `Bearer ${s}` } : {} });
  if (res.status === 401) throw new Unauthorized(s ? 'The service secret was refused' : 'Your session has ended: sign in again');
  if (!res.ok) {
    const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    throw new Error(body?.error?.message ?? `HTTP ${res.status}`);
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallback;
  return { blob: await res.blob(), name };
}

export interface ConversationRow {
  conversationId: string;
  customerId: string;
  externalId?: string;
  channel: string;
  state: string;
  lastMessageAt?: number;
  updatedAt: number;
  reflection?: { verdict: string; summary: string };
  /** The customer's email or phone, when known. */
  customer?: { email?: string; phone?: string };
  /** With `telemetry.store_text`: the last message's text. */
  lastMessage?: { text: string; from: 'customer' | 'assistant' | 'agent'; at: number };
}

export async function allPages<T>(path: string, max = 5000): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page: { items: T[]; nextCursor: string | null } = await api(`${path}${sep}limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && out.length < max);
  return out;
}

/** The signed-in person (and the session's CSRF token), or undefined when there is no live session. */
export async function currentPerson(): Promise<SignedIn | undefined> {
  const res = await fetch('/api/v1/agents/me');
  return res.ok ? ((await res.json()) as SignedIn) : undefined;
}

export async function signIn(email: string, password: string): Promise<{ ok: true; person: SignedIn } | { ok: false; message: string }> {
  const res = await fetch('/api/v1/agents/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as SignedIn & { error?: { message: string } };
  return res.ok ? { ok: true, person: body } : { ok: false, message: body.error?.message ?? `HTTP ${res.status}` };
}

export async function signOut(csrfToken: string): Promise<void> {
  await fetch('/api/v1/agents/sign-out', { method: 'POST', headers: { 'x-csrf-token': csrfToken } });
}

/** Sets the password with a set-password link's token. */
export async function setPassword(token: string, password: string): Promise<{ ok: true } | { ok: false; message: string }> {
  const res = await fetch('/api/v1/agents/set-password', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password }),
  });
  if (res.ok) return { ok: true };
  const body = (await res.json()) as { error?: { message: string } };
  return { ok: false, message: body.error?.message ?? `HTTP ${res.status}` };
}
