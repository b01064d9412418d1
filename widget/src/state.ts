// Pure view state of the widget: frames in, state out. No DOM here.
import type {
  ConfirmationOutcome,
  ConversationMode,
  HistoryEntry,
  HistoryHandoffEntry,
  MessageSource,
  WidgetHandoffNoticeFrame,
  WidgetServerFrame,
} from '../../sdk/src/widget-protocol.ts';
import { applyDelta, settleStreaming, type StreamingReply } from './streaming.ts';

export type Status = 'Connecting' | 'Connected' | 'Reconnecting' | 'Disconnected';
/** Why the widget is not connected, when it is not just a dropped socket. */
export type StatusReason = 'auth' | 'origin' | 'refreshing';
export type Outcome = ConfirmationOutcome;

export interface Bubble {
  id: string;
  /**
   * `confirmation`: a confirmation card (no `outcome` yet) or its receipt; `text` is its summary. `agent`: a person's
   * message (`author`). `status`: a line saying who answers now (`mode`, `author` when a person joined).
   */
  role: 'user' | 'assistant' | 'confirmation' | 'agent' | 'status';
  text: string;
  at: number;
  proactive?: boolean;
  /** user bubbles: stored durably by the server */
  delivered?: boolean;
  /**
   * user bubbles the server refused (not stored): the refusal's code, and for `rate_limited` when the widget sends it
   * again by itself (`retryAt`, on the widget's clock). Cleared when it is sent again.
   */
  failed?: { code: string; retryAt?: number };
  outcome?: Outcome;
  /** An approved action that ran: its result, in the customer's words (a failure is never shown as a success). */
  receipt?: { ok: boolean; text: string };
  author?: { name: string };
  mode?: 'human' | 'assistant';
  /** An assistant's reply: the sources its "[n]" markers cite. */
  sources?: MessageSource[];
  /** An assistant's apology or "I don't know": not asked "Did that answer your question?". */
  unanswered?: true;
  /** A `human` status line while nobody is there yet (closed, or no one free): it does not promise "shortly". */
  away?: boolean;
  /** A status line from the history (`ready`): shown, not announced again. */
  past?: true;
}

export interface ConfirmPrompt {
  id: string;
  name: string;
  summary: string;
}

export interface WidgetState {
  status: Status;
  reason?: StatusReason;
  bubbles: Bubble[];
  typing: boolean;
  /** The person typing (an `agent_typing` frame), shown by name with the typing indicator. */
  typingAgent?: string;
  /** The confirmation waiting for the customer (its card is the bubble with the same id). */
  confirm?: ConfirmPrompt;
  /** The last error, by code; the view words it for the customer. */
  error?: { code: string };
  customerId?: string;
  /** The panel is open (the customer can see the log). */
  open: boolean;
  /** Assistant messages that arrived while the panel was closed; cleared on open. */
  unread: number;
  /** The reply being written (from `delta` frames), until its final message arrives. */
  streaming?: StreamingReply;
  /** Who answers: absent or `assistant` the assistant, `human` a person (human handoff). */
  mode?: ConversationMode;
  /** While waiting for a person (until one writes): what to expect, and whether to offer the email form. */
  handoff?: WidgetHandoffNoticeFrame;
  /** The email form: the address sent and not confirmed yet (`pending`: its frame id), the one stored, a refusal. */
  contact?: { pending?: string; email?: string; error?: string };
  /**
   * The customer's feedback (docs/outcomes.md): `resolution` asks "Did that answer your question?" under the latest
   * answer (`answeredFor`: the answer it was answered for); `rating`: asked, or sent (`ratedAfter`: the last message
   * then; the thanks shows only until the next one, not pinned under every later answer).
   */
  feedback?: {
    resolution: boolean;
    answeredFor?: string;
    rating?: 'asked' | 'sent';
    ratedAfter?: string;
    /** Offer "Talk to a person" after a "No" (`ready.feedback.handoff`); `said`: the answer given; `personAsked`: sent. */
    handoff?: boolean;
    said?: 'yes' | 'no';
    personAsked?: true;
  };
}

export const initialState: WidgetState = { status: 'Connecting', bubbles: [], typing: false, open: false, unread: 0 };

export type Action =
  /** `at`: when the frame arrived (frames without their own time, e.g. `confirm`, are shown at it). */
  | { type: 'frame'; frame: WidgetServerFrame; at?: number }
  | { type: 'status'; status: Status; reason?: StatusReason }
  | { type: 'sent'; id: string; text: string; at: number }
  /** A refused message goes out again (Retry, or the rate limit's wait is over). */
  | { type: 'retry'; id: string }
  /** Messages kept from an earlier page (localStorage) that the server has not acknowledged. */
  | { type: 'restore'; messages: { id: string; text: string; at: number }[] }
  | { type: 'answered'; id: string; approve: boolean }
  | { type: 'panel'; open: boolean }
  /** The customer sent the email form (`id`: its `contact` frame's). */
  | { type: 'contact'; id: string; email: string }
  /** The customer answered "Did that answer your question?" for this answer. */
  | { type: 'resolved'; id: string; yes: boolean }
  /** The customer asked for a person ("Talk to a person" after a "No"). */
  | { type: 'personAsked' }
  | { type: 'rated' }
  | { type: 'error'; code: string };

/** The wait before re-sending a rate-limited message when the server did not say how long (an older server). */
export const RATE_LIMIT_FALLBACK_MS = 5_000;
/** Refusals a re-send cannot fix (the text itself is refused): no automatic re-send, not even after a reconnect. */
const FINAL_REFUSALS = new Set(['too_long', 'bad_frame']);

const FATAL_REASONS: Record<string, StatusReason> = { unauthorized: 'auth', forbidden_origin: 'origin' };

const fromHistory = (h: HistoryEntry): Bubble => {
  const b: Bubble = { id: h.id, role: h.role, text: h.text, at: h.at, delivered: true };
  if (h.proactive) b.proactive = true;
  if (h.outcome) b.outcome = h.outcome;
  if (h.receipt) b.receipt = { ok: h.receipt.ok, text: h.receipt.text };
  if (h.author) b.author = h.author;
  if (h.sources?.length) b.sources = h.sources;
  if (h.unanswered) b.unanswered = true;
  return b;
};

const statusId = (id: string) => `status:${id}`;

const fromHandoff = (h: HistoryHandoffEntry): Bubble => {
  const b: Bubble = { id: statusId(h.id), role: 'status', text: '', at: h.at, mode: h.mode, past: true };
  if (h.agent) b.author = h.agent;
  if (h.away) b.away = true;
  return b;
};

/** The history's bubbles, each handoff line after the entry it followed (`after`; absent or unknown: first). */
function historyBubbles(history: HistoryEntry[], handoffs: HistoryHandoffEntry[] = []): Bubble[] {
  const known = new Set(history.map((h) => h.id));
  const lines = handoffs.map((h) => ({ after: h.after !== undefined && known.has(h.after) ? h.after : undefined, bubble: fromHandoff(h) }));
  const out = lines.filter((l) => l.after === undefined).map((l) => l.bubble);
  for (const h of history) out.push(fromHistory(h), ...lines.filter((l) => l.after === h.id).map((l) => l.bubble));
  return out;
}

const resolve = (state: WidgetState, id: string, outcome: Outcome): WidgetState => {
  if (!state.bubbles.some((b) => b.id === id && b.role === 'confirmation')) return state;
  return {
    ...state,
    bubbles: state.bubbles.map((b) => (b.id === id && b.role === 'confirmation' ? { ...b, outcome } : b)),
    confirm: state.confirm?.id === id ? undefined : state.confirm,
  };
};

export function reduce(state: WidgetState, action: Action): WidgetState {
  switch (action.type) {
    case 'status':
      if (action.status === 'Connected') return { ...state, status: action.status, reason: undefined, error: undefined };
      return { ...state, status: action.status, reason: action.reason ?? (action.status === 'Disconnected' ? state.reason : undefined) };
    case 'sent':
      if (state.bubbles.some((b) => b.id === action.id)) return state;
      return { ...state, bubbles: [...state.bubbles, { id: action.id, role: 'user', text: action.text, at: action.at, delivered: false }] };
    case 'retry':
      return { ...state, bubbles: state.bubbles.map((b) => (b.id === action.id && b.failed ? { ...b, failed: undefined } : b)) };
    case 'restore': {
      const known = new Set(state.bubbles.map((b) => b.id));
      const fresh = action.messages.filter((m) => !known.has(m.id)).map((m): Bubble => ({ id: m.id, role: 'user', text: m.text, at: m.at, delivered: false }));
      return fresh.length ? { ...state, bubbles: [...state.bubbles, ...fresh] } : state;
    }
    case 'answered':
      return resolve(state, action.id, action.approve ? 'approved' : 'denied');
    case 'panel':
      return { ...state, open: action.open, unread: action.open ? 0 : state.unread };
    case 'error':
      return { ...state, error: { code: action.code } };
    case 'contact':
      return { ...state, contact: { ...state.contact, pending: action.id, error: undefined } };
    case 'resolved':
      return {
        ...state,
        feedback: Object.assign({ resolution: true }, state.feedback, { answeredFor: action.id, said: action.yes ? 'yes' : 'no' } as const),
      };
    case 'personAsked':
      return { ...state, feedback: Object.assign({ resolution: true }, state.feedback, { personAsked: true } as const) };
    case 'rated':
      return {
        ...state,
        feedback: Object.assign({ resolution: false }, state.feedback, { rating: 'sent' as const, ratedAfter: state.bubbles[state.bubbles.length - 1]?.id }),
      };
    case 'frame':
      return reduceFrame(state, action.frame, action.at);
  }
}

function reduceFrame(state: WidgetState, f: WidgetServerFrame, receivedAt = 0): WidgetState {
  switch (f.type) {
    case 'ready': {
      // History is the truth; keep local messages the server has not stored yet (they are re-sent).
      // A waiting confirmation card is dropped: the server re-sends the one still pending right after ready.
      const known = new Set(f.history.map((h) => h.id));
      const unsent = state.bubbles.filter((b) => b.role === 'user' && !b.delivered && !known.has(b.id));
      return {
        ...state,
        status: 'Connected',
        reason: undefined,
        customerId: f.customerId,
        bubbles: [...historyBubbles(f.history, f.handoffs), ...unsent],
        typing: false,
        error: undefined,
        confirm: undefined,
        streaming: undefined,
        mode: f.status,
        // The server sends the notice again right after `ready` while the conversation still waits for a person.
        handoff: undefined,
        feedback: feedbackOnReady(state, f.feedback),
      };
    }
    case 'rate':
      return state.feedback?.rating === 'sent'
        ? state
        : { ...state, feedback: Object.assign({ resolution: false }, state.feedback, { rating: 'asked' as const }) };
    case 'noted':
      return state;
    case 'ack':
      return { ...state, bubbles: state.bubbles.map((b) => (b.id === f.id ? { ...b, delivered: true, failed: undefined } : b)) };
    case 'message':
      if (state.bubbles.some((b) => b.id === f.id)) return state;
      return {
        ...state,
        bubbles: [
          ...state.bubbles,
          { id: f.id, role: f.role, text: f.text, at: f.at, proactive: f.proactive, author: f.author, sources: f.sources, unanswered: f.unanswered },
        ],
        ...(f.role === 'agent' ? { typing: false, typingAgent: undefined } : {}),
        unread: state.open ? state.unread : state.unread + 1,
        streaming: settleStreaming(state.streaming, f.id),
      };
    case 'delta':
      return { ...state, streaming: applyDelta(state.streaming, f, (id) => state.bubbles.some((b) => b.id === id)) };
    case 'typing':
      return { ...state, typing: f.on, typingAgent: undefined };
    case 'agent_typing':
      return { ...state, typing: f.on, typingAgent: f.on ? f.agent.name : undefined };
    case 'confirm': {
      if (state.bubbles.some((b) => b.id === f.id)) return state;
      const at = Math.max(receivedAt, state.bubbles[state.bubbles.length - 1]?.at ?? 0);
      return {
        ...state,
        confirm: { id: f.id, name: f.name, summary: f.summary },
        bubbles: [...state.bubbles, { id: f.id, role: 'confirmation', text: f.summary, at }],
      };
    }
    case 'confirmation':
      return resolve(state, f.id, f.outcome);
    case 'receipt':
      if (!state.bubbles.some((b) => b.id === f.id && b.role === 'confirmation')) return state;
      return {
        ...state,
        bubbles: state.bubbles.map((b) =>
          b.id === f.id && b.role === 'confirmation' ? { ...b, outcome: 'approved', receipt: { ok: f.ok, text: f.text } } : b,
        ),
        confirm: state.confirm?.id === f.id ? undefined : state.confirm,
      };
    case 'status': {
      const line: Bubble = { id: statusId(f.id ?? `${f.at}:${f.mode}:${f.agent?.name ?? ''}`), role: 'status', text: '', at: f.at, mode: f.mode };
      if (f.agent) line.author = f.agent;
      if (state.bubbles.some((b) => b.id === line.id)) return state;
      // A person wrote, or the assistant is back: nothing to expect any more.
      const handoff = f.agent || f.mode === 'assistant' ? undefined : state.handoff;
      return { ...state, mode: f.agent ? { mode: f.mode, agent: f.agent } : { mode: f.mode }, bubbles: [...state.bubbles, line], typing: false, handoff };
    }
    case 'handoff_notice':
      return {
        ...state,
        bubbles: f.kind === 'open' ? state.bubbles : markAway(state.bubbles),
        handoff: f,
        contact: f.contactEmail ? { ...state.contact, email: f.contactEmail } : state.contact,
      };
    case 'contact_saved':
      return { ...state, contact: { email: f.email } };
    case 'error': {
      if (f.id !== undefined && f.id === state.contact?.pending) return { ...state, contact: { ...state.contact, pending: undefined, error: f.code } };
      if (f.id !== undefined && state.bubbles.some((b) => b.id === f.id && b.role === 'user' && !b.delivered)) {
        // A refused message: its bubble says "Not sent" (with Retry); a rate-limited one goes again after the wait.
        const failed: Bubble['failed'] = { code: f.code };
        if (f.code === 'rate_limited') failed.retryAt = receivedAt + (f.retryAfterMs ?? RATE_LIMIT_FALLBACK_MS);
        return { ...state, bubbles: state.bubbles.map((b) => (b.id === f.id ? { ...b, failed } : b)) };
      }
      const reason = FATAL_REASONS[f.code];
      return reason ? { ...state, reason } : { ...state, error: { code: f.code } };
    }
    default:
      // A frame this build does not know (from a newer server) changes nothing.
      return state;
  }
}

/** The last "a person will join" line no longer promises "shortly" (the team is away, or no one is free yet). */
function markAway(bubbles: Bubble[]): Bubble[] {
  let i = bubbles.length - 1;
  while (i >= 0 && !(bubbles[i].role === 'status' && bubbles[i].mode === 'human' && !bubbles[i].author)) i--;
  if (i < 0 || bubbles[i].away) return bubbles;
  return bubbles.map((b, j) => (j === i ? { ...b, away: true } : b));
}

/** What `ready` says about feedback, keeping what the customer already did on this page. */
function feedbackOnReady(state: WidgetState, offered: { resolution: boolean; rating: boolean; handoff?: boolean } | undefined): WidgetState['feedback'] {
  if (!offered) return undefined;
  const fb: NonNullable<WidgetState['feedback']> = { resolution: offered.resolution };
  if (offered.handoff) fb.handoff = true;
  if (state.feedback?.answeredFor !== undefined) Object.assign(fb, { answeredFor: state.feedback.answeredFor, said: state.feedback.said });
  if (state.feedback?.personAsked) fb.personAsked = true;
  if (state.feedback?.rating === 'sent') Object.assign(fb, { rating: 'sent', ratedAfter: state.feedback.ratedAfter });
  else if (offered.rating) fb.rating = 'asked';
  return fb;
}

/** Whether to offer "Talk to a person": the customer said No to the latest answer, handoff is on, not asked yet. */
export function offerPerson(state: WidgetState): boolean {
  const fb = state.feedback;
  const target = resolutionTarget(state);
  return !!fb?.handoff && !fb.personAsked && fb.said === 'no' && target !== undefined && fb.answeredFor === target;
}

/** The answer "Did that answer your question?" is about: the last bubble, when it is the assistant's answer. */
export function resolutionTarget(state: WidgetState): string | undefined {
  if (!state.feedback?.resolution || state.mode?.mode === 'human' || state.streaming || state.confirm) return undefined;
  const last = state.bubbles[state.bubbles.length - 1];
  return last?.role === 'assistant' && !last.proactive && !last.unanswered ? last.id : undefined;
}

/**
 * Whether the customer wrote after the confirmation card that still waits: their message is answered only once the
 * card is (the turn waits on it), so the widget says so instead of leaving them in silence.
 */
export function typedWhileConfirming(state: WidgetState): boolean {
  if (!state.confirm) return false;
  const card = state.bubbles.findIndex((b) => b.id === state.confirm!.id && b.role === 'confirmation');
  return card >= 0 && state.bubbles.slice(card + 1).some((b) => b.role === 'user');
}

/** Messages sent but not acknowledged (kept across a reload until they are). */
export const unacknowledged = (state: WidgetState) => state.bubbles.filter((b) => b.role === 'user' && !b.delivered);

/** What goes again, with the same id, after `ready`: every unacknowledged message a re-send can help. */
export const toResend = (state: WidgetState) => unacknowledged(state).filter((b) => !b.failed || !FINAL_REFUSALS.has(b.failed.code));

/**
 * The next rate-limited message to send again: the oldest one (so they are stored in order, one at a time), and
 * when (`at`, on the widget's clock). None: nothing waits for the rate limit.
 */
export function nextRateLimited(state: WidgetState): { id: string; text: string; at: number } | undefined {
  const b = state.bubbles.find((x) => x.role === 'user' && !x.delivered && x.failed?.code === 'rate_limited');
  return b && { id: b.id, text: b.text, at: b.failed?.retryAt ?? 0 };
}

/** Reconnect delay: 0.5 s doubling to 30 s, half fixed and half random (jitter). */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 500 * 2 ** Math.max(0, attempt));
  return Math.round(base / 2 + (random() * base) / 2);
}
