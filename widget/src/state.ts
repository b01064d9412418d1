// Pure view state of the widget: frames in, state out. No DOM here.
import type { HistoryEntry, WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';
import { applyDelta, settleStreaming, type StreamingReply } from './streaming.ts';

export type Status = 'Connecting' | 'Connected' | 'Reconnecting' | 'Disconnected';

export interface Bubble {
  id: string;
  role: 'user' | 'assistant';
  text: string;
  at: number;
  proactive?: boolean;
  /** user bubbles: stored durably by the server */
  delivered?: boolean;
}

export interface ConfirmPrompt {
  id: string;
  name: string;
  summary: string;
  answered?: 'approved' | 'declined';
}

export interface WidgetState {
  status: Status;
  bubbles: Bubble[];
  typing: boolean;
  confirm?: ConfirmPrompt;
  error?: string;
  customerId?: string;
  /** The panel is open (the customer can see the log). */
  open: boolean;
  /** Assistant messages that arrived while the panel was closed; cleared on open. */
  unread: number;
  /** The reply being written (from `delta` frames), until its final message arrives. */
  streaming?: StreamingReply;
}

export const initialState: WidgetState = { status: 'Connecting', bubbles: [], typing: false, open: false, unread: 0 };

export type Action =
  | { type: 'frame'; frame: WidgetServerFrame }
  | { type: 'status'; status: Status }
  | { type: 'sent'; id: string; text: string; at: number }
  | { type: 'answered'; id: string; approve: boolean }
  | { type: 'panel'; open: boolean }
  | { type: 'error'; message: string };

const fromHistory = (h: HistoryEntry): Bubble => ({ id: h.id, role: h.role, text: h.text, at: h.at, proactive: h.proactive, delivered: true });

export function reduce(state: WidgetState, action: Action): WidgetState {
  switch (action.type) {
    case 'status':
      return { ...state, status: action.status, ...(action.status === 'Connected' ? { error: undefined } : {}) };
    case 'sent':
      if (state.bubbles.some((b) => b.id === action.id)) return state;
      return { ...state, bubbles: [...state.bubbles, { id: action.id, role: 'user', text: action.text, at: action.at, delivered: false }] };
    case 'answered':
      if (state.confirm?.id !== action.id) return state;
      return { ...state, confirm: { ...state.confirm, answered: action.approve ? 'approved' : 'declined' } };
    case 'panel':
      return { ...state, open: action.open, unread: action.open ? 0 : state.unread };
    case 'error':
      return { ...state, error: action.message };
    case 'frame':
      return reduceFrame(state, action.frame);
  }
}

function reduceFrame(state: WidgetState, f: WidgetServerFrame): WidgetState {
  switch (f.type) {
    case 'ready': {
      // History is the truth; keep local messages the server has not stored yet (they are re-sent).
      // A shown confirmation is dropped: the server re-sends the one still pending right after ready.
      const known = new Set(f.history.map((h) => h.id));
      const unsent = state.bubbles.filter((b) => b.role === 'user' && !b.delivered && !known.has(b.id));
      return {
        ...state,
        status: 'Connected',
        customerId: f.customerId,
        bubbles: [...f.history.map(fromHistory), ...unsent],
        typing: false,
        error: undefined,
        confirm: undefined,
        streaming: undefined,
      };
    }
    case 'ack':
      return { ...state, bubbles: state.bubbles.map((b) => (b.id === f.id ? { ...b, delivered: true } : b)) };
    case 'message':
      if (state.bubbles.some((b) => b.id === f.id)) return state;
      return {
        ...state,
        bubbles: [...state.bubbles, { id: f.id, role: 'assistant', text: f.text, at: f.at, proactive: f.proactive }],
        unread: state.open ? state.unread : state.unread + 1,
        streaming: settleStreaming(state.streaming, f.id),
      };
    case 'delta':
      return { ...state, streaming: applyDelta(state.streaming, f, (id) => state.bubbles.some((b) => b.id === id)) };
    case 'typing':
      return { ...state, typing: f.on };
    case 'confirm':
      if (state.confirm?.id === f.id) return state;
      return { ...state, confirm: { id: f.id, name: f.name, summary: f.summary } };
    case 'error':
      return { ...state, error: f.message };
    default:
      // A frame this build does not know (from a newer server) changes nothing.
      return state;
  }
}

/** Messages sent but not acknowledged: re-sent with the same id after a reconnect. */
export const unacknowledged = (state: WidgetState) => state.bubbles.filter((b) => b.role === 'user' && !b.delivered);

/** Reconnect delay: 0.5 s doubling to 30 s, half fixed and half random (jitter). */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 500 * 2 ** Math.max(0, attempt));
  return Math.round(base / 2 + (random() * base) / 2);
}
