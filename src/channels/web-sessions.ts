// Open widget sockets by customer, and the web channel's sink: replies,
// typing and confirmation prompts are pushed to every open widget of the
// customer. Durable state (history, pending confirmation) lives in LMDB, so a
// widget that was closed gets everything on its next `ready`.
import type { WebSocket } from 'ws';
import type { ChannelSink, ConversationMeta } from '../conversations/host.ts';
import type { ConversationOutput } from '../../machines/conversation.ts';

/** A socket this far behind is closed; the widget reconnects and reads the history. */
export const SLOW_CLIENT_BYTES = 1024 * 1024;

export interface WebSessions extends ChannelSink {
  add(customerId: string, socket: WebSocket): void;
  remove(customerId: string, socket: WebSocket): void;
  /** Sends a frame to every open widget of the customer; returns how many got it. */
  push(customerId: string, frame: Record<string, unknown>): number;
  count(): number;
}

export function sendFrame(socket: WebSocket, frame: Record<string, unknown>): boolean {
  if (socket.readyState !== socket.OPEN) return false;
  if (socket.bufferedAmount > SLOW_CLIENT_BYTES) {
    // A client this far behind would not read a close frame either: drop it.
    // Nothing is lost: the history is durable and comes back on the next `ready`.
    socket.terminate();
    return false;
  }
  socket.send(JSON.stringify(frame));
  return true;
}

export function createWebSessions(now: () => number): WebSessions {
  const byCustomer = new Map<string, Set<WebSocket>>();
  const push = (customerId: string, frame: Record<string, unknown>) => {
    let n = 0;
    for (const s of byCustomer.get(customerId) ?? []) if (sendFrame(s, frame)) n++;
    return n;
  };
  return {
    add(customerId, socket) {
      let set = byCustomer.get(customerId);
      if (!set) byCustomer.set(customerId, (set = new Set()));
      set.add(socket);
    },
    remove(customerId, socket) {
      const set = byCustomer.get(customerId);
      set?.delete(socket);
      if (set && set.size === 0) byCustomer.delete(customerId);
    },
    push,
    count: () => [...byCustomer.values()].reduce((n, s) => n + s.size, 0),
    deliver(meta: ConversationMeta, o: ConversationOutput) {
      if (o.type === 'typing') push(meta.customerId, { type: 'typing', on: o.on });
      else if (o.type === 'reply') push(meta.customerId, { type: 'message', id: o.id, role: 'assistant', text: o.text, at: now() });
      else if (o.type === 'confirm') push(meta.customerId, { type: 'confirm', id: o.id, name: o.name, args: o.args, summary: o.summary });
      else if (o.type === 'confirmation') push(meta.customerId, { type: 'confirmation', id: o.id, outcome: o.outcome, at: now() });
    },
  };
}
