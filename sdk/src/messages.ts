// Messages through the SDK: outbound ones Parley asks this backend to deliver (`send`, answered with `sent` by the
// `onSend` handler) and inbound ones the backend hands to Parley (`ingest`, resolved by Parley's `ack`, or with an
// unsuccessful ack when the client is not connected, the connection drops or no ack comes in time).
import { randomUUID } from 'node:crypto';
import type { AckFrame, ClientFrame, SendFrame } from './protocol.ts';
import type { IngestMessage, SendHandler } from './client-types.ts';
import { toolError } from './functions.ts';

export interface Messages {
  /** Sets the handler; true when there was none before (the client re-registers as a send provider then). */
  onSend(handler: SendHandler): boolean;
  /** Whether this SDK delivers outbound messages (`register.sendProvider`). */
  sendProvider(): boolean;
  onSendFrame(frame: SendFrame): Promise<void>;
  ingest(message: IngestMessage): Promise<AckFrame>;
  onAck(frame: AckFrame): void;
  /** The connection dropped: every ingest waiting for its ack resolves as `disconnected`. */
  disconnected(): void;
}

export interface MessagesDeps {
  /** Writes a frame to the current socket; false when there is none open. */
  send(frame: ClientFrame): boolean;
  registered(): boolean;
  ingestTimeoutMs: number;
}

export function createMessages({ send, registered, ingestTimeoutMs }: MessagesDeps): Messages {
  let sendHandler: SendHandler | undefined;
  const pendingIngests = new Map<string, { resolve: (a: AckFrame) => void; timer: NodeJS.Timeout }>();

  return {
    onSend(handler) {
      const had = !!sendHandler;
      sendHandler = handler;
      return !had;
    },

    sendProvider: () => !!sendHandler,

    async onSendFrame(frame) {
      if (!sendHandler) return void send({ type: 'sent', id: frame.id, ok: false, error: 'This SDK has no onSend handler' });
      try {
        const r = await sendHandler({ channel: frame.channel, to: frame.to, content: frame.content }, { id: frame.id });
        const messageId = r && typeof r.messageId === 'string' ? r.messageId : undefined;
        send({ type: 'sent', id: frame.id, ok: true, ...(messageId ? { messageId } : {}) });
      } catch (err) {
        send({ type: 'sent', id: frame.id, ok: false, error: toolError(err).message });
      }
    },

    ingest(message) {
      const id = randomUUID();
      const frame: ClientFrame = {
        type: 'ingest',
        id,
        channel: message.channel,
        from: message.from,
        text: message.text,
        ...(message.messageId ? { messageId: message.messageId } : {}),
      };
      if (!registered() || !send(frame)) return Promise.resolve({ type: 'ack', id, ok: false, error: 'not connected' });
      return new Promise<AckFrame>((resolve) => {
        const timer = setTimeout(() => {
          pendingIngests.delete(id);
          resolve({ type: 'ack', id, ok: false, error: 'timeout' });
        }, ingestTimeoutMs);
        timer.unref();
        pendingIngests.set(id, { resolve, timer });
      });
    },

    onAck(frame) {
      const p = pendingIngests.get(frame.id);
      if (!p) return;
      clearTimeout(p.timer);
      pendingIngests.delete(frame.id);
      p.resolve(frame);
    },

    disconnected() {
      for (const [id, p] of pendingIngests) {
        clearTimeout(p.timer);
        p.resolve({ type: 'ack', id, ok: false, error: 'disconnected' });
      }
      pendingIngests.clear();
    },
  };
}
