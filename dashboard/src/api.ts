// The dashboard reads the protected telemetry API with the secret the
// operator typed, kept only in this tab's sessionStorage.
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

export interface Summary {
  since: number;
  until: number;
  bucketMs: number;
  buckets: number[];
  messages: Record<string, number[]>;
  llm: { p50: (number | null)[]; p95: (number | null)[]; calls: number[] };
  tokens: Record<string, { prompt: number; completion: number; calls: number }>;
  proactive: { accepted: number[]; blockedByReason: Record<string, number> };
  tools: Record<string, { invoked: number; failed: number }>;
  toolFailures: number[];
  whatsappStatuses: Record<string, number>;
  confirmations: Record<string, number>;
  totals: { events: number; turnCalls: number; conversations: number; turns: number; messagesIn: number; messagesOut: number };
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
}

export interface EventRecord {
  id: string;
  at: number;
  type: string;
  conversationId?: string;
  channel?: string;
  data: Record<string, unknown>;
}

export interface TurnCall {
  id: string;
  turnId: string;
  sequence: number;
  at: number;
  provider: string;
  model: string;
  purpose: string;
  durationMs: number;
  promptTokens: number;
  completionTokens: number;
  toolCalls: string[];
  ok: boolean;
  error?: string;
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
