// What both kinds of simulated customer share (the widget's, session.ts; WhatsApp's, whatsapp-session.ts): the target,
// the session's interface, waiting with a deadline, and telemetry, which tells when a turn is over.
import type { SessionFrame } from './frames.ts';
import type { ToolCall } from './observed.ts';

export interface WhatsAppTarget {
  /** The app secret the webhook's signatures are made with, and the business number the customer writes to. */
  appSecret: string;
  phoneNumberId: string;
  webhookPath: string;
  /** The conversation of the customer with this number, once the first message made it. */
  conversationOf(phone: string): Promise<string | undefined>;
  /** The confirmation waiting in that conversation, with the arguments of its call (WhatsApp's buttons show words only). */
  pendingConfirmation(conversationId: string): Promise<{ id: string; name: string; args: unknown } | undefined>;
}

export interface SessionTarget {
  url: string;
  secret: string;
  /** Tool calls with their arguments, oldest first (the store's history when Parley is embedded). */
  toolCalls?: (conversationId: string) => Promise<ToolCall[]>;
  /** How the runner is a WhatsApp customer (an embedded Parley only); undefined: WhatsApp scenarios are skipped. */
  whatsapp?: WhatsAppTarget;
  deadlineMs?: number;
}

/** One simulated customer: what it received (as widget frames), and what it can do. */
export interface Session {
  /** undefined until the first message made the conversation (WhatsApp). */
  readonly conversationId: string | undefined;
  readonly frames: SessionFrame[];
  say(text: string): Promise<void>;
  /** Answers the pending confirmation; false when none is pending. */
  confirm(approve: boolean): Promise<boolean>;
  withHuman(): boolean;
  tools(): Promise<ToolCall[]>;
  close(): void;
}

export interface TelemetryEvent {
  id: string;
  at: number;
  type: string;
  data: Record<string, unknown>;
}

export class SessionError extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it gives a value; throws naming `what` after `deadlineMs`. */
export async function waitFor<T>(deadlineMs: number, what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new SessionError(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A conversation's telemetry, oldest first. */
export async function telemetryEvents(target: SessionTarget, conversationId: string): Promise<TelemetryEvent[]> {
  const res = await fetch(`${target.url}/api/v1/telemetry/events?conversationId=${encodeURIComponent(conversationId)}&limit=1000&order=asc`, {
    headers: { authorization: `Bearer ${target.secret}` },
  });
  if (!res.ok) throw new SessionError(`telemetry answered ${res.status}`);
  return ((await res.json()) as { items: TelemetryEvent[] }).items;
}

export const countOf = (list: TelemetryEvent[], type: string) => list.filter((e) => e.type === type).length;

/**
 * Whether the turn that began when `ended` turns had ended is over: a new `turn.ended` and every reply (the
 * assistant's and a person's) arrived, or a person has the conversation and no turn runs.
 */
export function turnOver(now: TelemetryEvent[], ended: number, replies: number, withHuman: boolean): boolean {
  const out = countOf(now, 'message.out') + countOf(now, 'message.agent');
  if (countOf(now, 'turn.ended') > ended && replies >= out) return true;
  return withHuman && countOf(now, 'turn.started') === countOf(now, 'turn.ended') && replies >= out;
}
