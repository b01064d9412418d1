// Open widget sockets by customer, and the web channel's sink: replies,
// typing and confirmation prompts are pushed to every open widget of the
// customer. Durable state (history, pending confirmation) lives in LMDB, so a
// widget that was closed gets everything on its next `ready`.
//
// A reply being written is pushed as `delta` frames and kept here (memory
// only) until its final `message` is delivered, so a widget that connects in
// the middle is caught up with the text so far (`writing`).
//
// Several nodes: the customer's widgets may be open on other nodes. Every frame
// pushed here is also handed to `relay` (the cluster's web relay), and frames
// relayed by other nodes come in through `pushFromPeer`.
import type { WebSocket } from 'ws';
import { sendCoalesced } from '../http/ws-send.ts';
import type { ChannelSink, ConversationMeta, CustomerInput } from '../conversations/types.ts';
import type { ConversationOutput } from '../../machines/conversation.ts';
import type { ReplyDelta } from '../conversations/reply-stream.ts';
import type { WidgetAssistantMessageFrame, WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';

/** A socket this far behind is closed; the widget reconnects and reads the history. */
export const SLOW_CLIENT_BYTES = 1024 * 1024;

export interface WebSessions extends ChannelSink {
  /**
   * Adds an open widget. With `hold`, frames for it wait (in order) until `release`: its `ready` must go first,
   * and the history it carries is read after the socket is added, so nothing committed in between is missed.
   */
  add(customerId: string, socket: WebSocket, o?: { hold?: boolean }): void;
  /** Sends what waited for this socket, except the frames `skip` says it already has. */
  release(socket: WebSocket, skip?: (frame: WidgetServerFrame) => boolean): void;
  remove(customerId: string, socket: WebSocket): void;
  /** Sends a frame to every open widget of the customer (here, and relayed to other nodes); returns how many here got it. */
  push(customerId: string, frame: WidgetServerFrame): number;
  /** A frame another node pushed for the customer: to the widgets open here only. */
  pushFromPeer(customerId: string, frame: WidgetServerFrame): number;
  count(): number;
  stream(meta: ConversationMeta, delta: ReplyDelta): void;
  deliver(meta: ConversationMeta, output: ConversationOutput): void;
  accepted(meta: ConversationMeta, input: CustomerInput): void;
  /** The reply being written for this customer right now (its id and the text so far), if any. */
  writing(customerId: string): { id: string; text: string } | undefined;
}

export function sendFrame(socket: WebSocket, frame: WidgetServerFrame): boolean {
  if (socket.readyState !== socket.OPEN) return false;
  if (socket.bufferedAmount > SLOW_CLIENT_BYTES) {
    // A client this far behind would not read a close frame either: drop it.
    // Nothing is lost: the history is durable and comes back on the next `ready`.
    socket.terminate();
    return false;
  }
  sendCoalesced(socket, JSON.stringify(frame));
  return true;
}

export function createWebSessions(now: () => number, relay?: (customerId: string, frame: WidgetServerFrame) => void): WebSessions {
  const byCustomer = new Map<string, Set<WebSocket>>();
  const held = new Map<WebSocket, WidgetServerFrame[]>();
  const writing = new Map<string, { id: string; text: string }>();
  /** The reply being written, followed from the frames themselves (so relayed ones count too). */
  const follow = (customerId: string, frame: WidgetServerFrame) => {
    if (frame.type === 'delta') {
      const current = writing.get(customerId);
      const text = !current || frame.reset || current.id !== frame.id ? frame.text : current.text + frame.text;
      if (text) writing.set(customerId, { id: frame.id, text });
      else writing.delete(customerId);
    } else if (frame.type === 'message' && frame.role === 'assistant' && writing.get(customerId)?.id === frame.id) writing.delete(customerId);
  };
  const pushHere = (customerId: string, frame: WidgetServerFrame) => {
    follow(customerId, frame);
    let n = 0;
    for (const s of byCustomer.get(customerId) ?? []) {
      const waiting = held.get(s);
      if (waiting) {
        waiting.push(frame);
        n++;
      } else if (sendFrame(s, frame)) n++;
    }
    return n;
  };
  const push = (customerId: string, frame: WidgetServerFrame) => {
    relay?.(customerId, frame);
    return pushHere(customerId, frame);
  };
  return {
    add(customerId, socket, o = {}) {
      let set = byCustomer.get(customerId);
      if (!set) byCustomer.set(customerId, (set = new Set()));
      set.add(socket);
      if (o.hold) held.set(socket, []);
    },
    release(socket, skip) {
      const waiting = held.get(socket);
      held.delete(socket);
      for (const frame of waiting ?? []) if (!skip?.(frame)) sendFrame(socket, frame);
    },
    remove(customerId, socket) {
      held.delete(socket);
      const set = byCustomer.get(customerId);
      set?.delete(socket);
      if (set && set.size === 0) byCustomer.delete(customerId);
    },
    push,
    pushFromPeer: pushHere,
    count: () => [...byCustomer.values()].reduce((n, s) => n + s.size, 0),
    writing: (customerId) => writing.get(customerId),
    stream(meta: ConversationMeta, d: ReplyDelta) {
      push(meta.customerId, d.reset ? { type: 'delta', id: d.id, text: d.text, reset: true } : { type: 'delta', id: d.id, text: d.text });
    },
    // The customer message is durable: its `ack` to the widget that sent it, in order with the outputs of its write.
    accepted(_meta: ConversationMeta, input: CustomerInput) {
      input.ack?.();
    },
    deliver(meta: ConversationMeta, o: ConversationOutput) {
      if (o.type === 'typing') push(meta.customerId, { type: 'typing', on: o.on });
      else if (o.type === 'reply') {
        const frame: WidgetAssistantMessageFrame = { type: 'message', id: o.id, role: 'assistant', text: o.text, at: now() };
        if (o.sources) frame.sources = o.sources;
        if (o.unanswered) frame.unanswered = true;
        push(meta.customerId, frame);
      } else if (o.type === 'confirm') push(meta.customerId, { type: 'confirm', id: o.id, name: o.name, args: o.args, summary: o.summary });
      else if (o.type === 'confirmation')
        push(meta.customerId, Object.assign({ type: 'confirmation' as const, id: o.id, outcome: o.outcome, at: now() }, o.reason ? { reason: o.reason } : {}));
      else if (o.type === 'tool' && o.phase !== 'invoked' && o.confirmationId && o.receipt)
        push(meta.customerId, { type: 'receipt', id: o.confirmationId, ok: o.phase === 'result', text: o.receipt, at: now() });
      else if (o.type === 'agent')
        push(meta.customerId, { type: 'message', id: o.id, role: 'agent', text: o.text, at: now(), author: { name: o.author.name } });
      else if (o.type === 'handoff') {
        if (o.phase === 'joined') push(meta.customerId, { type: 'status', mode: 'human', agent: { name: o.agent.name }, at: now(), id: o.id });
        // `offline` changes nobody: the team still has it (its `handoff_notice` says so: src/handoff/web-notices.ts).
        else if (o.phase !== 'offline') push(meta.customerId, { type: 'status', mode: o.phase === 'requested' ? 'human' : 'assistant', at: now(), id: o.id });
      }
    },
  };
}
