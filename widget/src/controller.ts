// The widget without its DOM: state, socket, re-sending, a fresh session token when the old one is refused.
// index.ts hands it a render function; unit tests hand it a fake WebSocket and fake timers.
import type { WidgetClientFrame, WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';
import { connect, type ConnectionOptions } from './connection.ts';
import { createOutbox, type OutboxStorage } from './outbox.ts';
import { initialState, nextRateLimited, reduce, resolutionTarget, toResend, unacknowledged, type Action, type WidgetState } from './state.ts';

export interface ControllerOptions {
  url: string;
  init: () => WidgetClientFrame;
  render: (state: WidgetState) => void;
  newId: () => string;
  now?: () => number;
  /**
   * Called when the server refuses the session token (expired or invalid). Resolves true once a fresh token is
   * in place (the widget then connects again), false to give up (the widget shows that the session ended).
   */
  refreshAuth?: () => Promise<boolean>;
  /**
   * Before the first connect (the page gave no token but an auth URL): resolves true once a token is in place. False:
   * the widget connects without one all the same, and a refusal then ends the session without asking again.
   */
  firstAuth?: () => Promise<boolean>;
  /** Where error codes and the server's developer text go (the customer reads plain words instead). */
  log?: (line: string) => void;
  /** Every frame from the server, before it is shown (the visitor token is kept from `ready`). */
  onServerFrame?: (frame: WidgetServerFrame) => void;
  WebSocketImpl?: ConnectionOptions['WebSocketImpl'];
  setTimer?: ConnectionOptions['setTimer'];
  /** Where unacknowledged messages survive a reload (localStorage in the browser); none: kept in memory only. */
  storage?: OutboxStorage;
}

/** The code of the error shown when an answer could not be sent (offline). */
export const NOT_SENT = 'not_sent';

export function createController(o: ControllerOptions) {
  const now = o.now ?? Date.now;
  const log = o.log ?? ((line: string) => console.warn(line));
  let state: WidgetState = initialState;
  // One refresh per refusal: a fresh token that is refused again before `ready` ends the session.
  let refreshTried = false;
  const setTimer = o.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const outbox = createOutbox(o.storage, o.url);
  const dispatch = (a: Action) => {
    state = reduce(state, a);
    if (state.customerId) outbox.save(state.customerId, unacknowledged(state));
    o.render(state);
  };
  // Rate-limited messages go again one at a time, oldest first, each once its wait is over; `retrying` is the one
  // out now (its ack or refusal sends the next). `pumpToken` cancels a timer that a newer plan replaced.
  let retrying: string | undefined;
  let pumpToken = 0;
  const pump = () => {
    if (retrying) return;
    const next = nextRateLimited(state);
    if (!next) return;
    const wait = next.at - now();
    const token = ++pumpToken;
    if (wait > 0) {
      setTimer(() => token === pumpToken && pump(), wait);
      return;
    }
    if (!resend(next.id, next.text)) return; // offline: the next `ready` sends it
    retrying = next.id;
  };
  const resend = (id: string, text: string): boolean => {
    if (!connection.send({ type: 'message', id, text })) return false;
    dispatch({ type: 'retry', id });
    return true;
  };
  const refresh = async () => {
    refreshTried = true;
    dispatch({ type: 'status', status: 'Connecting', reason: 'refreshing' });
    let ok = false;
    try {
      ok = (await o.refreshAuth?.()) === true;
    } catch (err) {
      log(`[parley] onAuthExpired failed: ${(err as Error)?.message ?? String(err)}`);
    }
    if (ok) connection.restart();
    else dispatch({ type: 'status', status: 'Disconnected', reason: 'auth' });
  };
  const connection = connect({
    url: o.url,
    init: o.init,
    onFrame: (frame) => {
      if (frame.type === 'error') log(`[parley] ${frame.code}: ${frame.message}`);
      if (frame.type === 'ready') refreshTried = false;
      o.onServerFrame?.(frame);
      // Read before `ready` is applied: applying it saves what this page has not sent, over what an earlier page kept.
      const kept = frame.type === 'ready' ? outbox.load(frame.customerId) : [];
      dispatch({ type: 'frame', frame, at: now() });
      if (kept.length) dispatch({ type: 'restore', messages: kept });
      if ((frame.type === 'ack' || frame.type === 'error') && frame.id !== undefined && frame.id === retrying) retrying = undefined;
      if (frame.type === 'ack' || (frame.type === 'error' && frame.code === 'rate_limited')) pump();
    },
    onStatus: (status) => {
      dispatch({ type: 'status', status });
      if (status === 'Disconnected' && state.reason === 'auth' && o.refreshAuth && !refreshTried) void refresh();
    },
    onReady: () => {
      retrying = undefined;
      for (const b of toResend(state)) resend(b.id, b.text);
    },
    WebSocketImpl: o.WebSocketImpl,
    setTimer: o.setTimer,
    deferred: !!o.firstAuth,
  });
  if (o.firstAuth) {
    void o
      .firstAuth()
      .catch(() => false)
      .then(() => {
        // Whether a token came or not, its refusal before `ready` ends the session (like a refreshed one's).
        refreshTried = true;
        connection.restart();
      });
  }
  return {
    state: () => state,
    send(text: string) {
      const id = o.newId();
      dispatch({ type: 'sent', id, text, at: now() });
      // Not connected: kept as unacknowledged and sent after the next `ready`.
      connection.send({ type: 'message', id, text });
    },
    /** Sends a refused message again now (its Retry button). */
    retry(id: string) {
      const b = unacknowledged(state).find((x) => x.id === id);
      if (!b) return;
      // Not connected: it stays marked and goes with the next `ready`.
      if (resend(b.id, b.text) && b.failed?.code === 'rate_limited') retrying ??= b.id;
    },
    /** The browser is online again or the page visible again: a socket waiting for its backoff connects now. */
    wake: () => connection.reconnectNow(),
    /** Returns false (and shows why) when the answer could not be sent. */
    answer(id: string, approve: boolean): boolean {
      if (!connection.send({ type: 'confirm', id, approve })) {
        dispatch({ type: 'error', code: NOT_SENT });
        return false;
      }
      dispatch({ type: 'answered', id, approve });
      return true;
    },
    /** "Did that answer your question?": false (and shows why) when the answer could not be sent. */
    resolve(yes: boolean): boolean {
      const id = resolutionTarget(state);
      if (!id) return false;
      if (!connection.send({ type: 'resolution', answer: yes ? 'yes' : 'no' })) {
        dispatch({ type: 'error', code: NOT_SENT });
        return false;
      }
      dispatch({ type: 'resolved', id, yes });
      return true;
    },
    /** "Talk to a person" (after a "No"): false (and shows why) when it could not be sent. Sent once. */
    askPerson(): boolean {
      if (state.feedback?.personAsked) return true;
      if (!connection.send({ type: 'handoff' })) {
        dispatch({ type: 'error', code: NOT_SENT });
        return false;
      }
      dispatch({ type: 'personAsked' });
      return true;
    },
    /** The customer's rating (1–5, optional comment): false (and shows why) when it could not be sent. */
    rate(score: number, comment?: string): boolean {
      const frame: WidgetClientFrame = comment ? { type: 'rating', score, comment } : { type: 'rating', score };
      if (!connection.send(frame)) {
        dispatch({ type: 'error', code: NOT_SENT });
        return false;
      }
      dispatch({ type: 'rated' });
      return true;
    },
    panel(open: boolean) {
      dispatch({ type: 'panel', open });
    },
    /** The email form: the address for a reply while waiting for a person. Returns false (and shows why) when offline. */
    contact(email: string): boolean {
      const id = o.newId();
      if (!connection.send({ type: 'contact', id, email })) {
        dispatch({ type: 'error', code: NOT_SENT });
        return false;
      }
      dispatch({ type: 'contact', id, email });
      return true;
    },
    /** A new session token was set by the host page: connect again if the old one had ended the session. */
    reconnectIfEnded() {
      if (state.status === 'Disconnected' && state.reason === 'auth') {
        refreshTried = true;
        connection.restart();
      }
    },
    close: () => connection.close(),
  };
}
