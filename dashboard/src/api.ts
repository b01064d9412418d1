// The dashboard reads the protected telemetry API with the secret the
// operator typed, kept only in this tab's sessionStorage.
// Record shapes are the server's own (type-only imports: no server code reaches the bundle).
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
  const res = await fetch(path, { headers: { authorization: `Bearer ${secret.get()}` } });
  if (res.status === 401) throw new Unauthorized('The service secret was refused');
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
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
