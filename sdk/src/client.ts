// The Parley backend SDK client: dials out to Parley's /sdk WebSocket, registers
// the exposed functions, answers invokes, delivers outbound messages (`onSend`)
// and hands inbound ones over (`ingest`). Reconnects by itself.
//
// This file puts the parts together and routes Parley's frames to them: connection.ts (the socket, reconnects),
// functions.ts (exposed functions, invokes, summaries), messages.ts (outbound sends, ingest), events.ts (`on`, the
// handoff handlers); the public shapes are in client-types.ts.
import {
  AckFrame,
  ErrorFrame,
  InvokeFrame,
  RegisteredFrame,
  SendFrame,
  HandoffFrame,
  CustomerMessageFrame,
  SummarizeFrame,
  ServerFrame,
  type ClientFrame,
} from './protocol.ts';
import { downloadMedia, ParleyMediaError } from './media.ts';
import type { z } from 'zod';
import { createConversations } from './conversations.ts';
import { SDK_NAME, SDK_VERSION, type ClientOptions, type CustomerMessageHandler, type HandoffHandler, type ParleyClient } from './client-types.ts';
import { createConnection, ParleyConnectionError } from './connection.ts';
import { createEvents } from './events.ts';
import { createFunctionRegistry } from './functions.ts';
import { createMessages } from './messages.ts';

export {
  SDK_NAME,
  SDK_VERSION,
  type ClientEvents,
  type ClientOptions,
  type CustomerMessageHandler,
  type ExposeOptions,
  type FunctionHandler,
  type HandoffHandler,
  type IngestMessage,
  type InvocationContext,
  type ListenOptions,
  type OutboundMessage,
  type ParleyClient,
  type SendHandler,
} from './client-types.ts';
export { ParleyConnectionError, sdkUrl } from './connection.ts';

const SERVER_SCHEMAS: Record<string, z.ZodType> = {
  registered: RegisteredFrame,
  invoke: InvokeFrame,
  send: SendFrame,
  ack: AckFrame,
  handoff: HandoffFrame,
  customer_message: CustomerMessageFrame,
  summarize: SummarizeFrame,
  error: ErrorFrame,
};

/** A server frame read and checked against its type's schema; throws with what is wrong. */
function parseServerFrame(raw: string): ServerFrame {
  const json = JSON.parse(raw) as { type?: unknown };
  const schema = (typeof json?.type === 'string' && SERVER_SCHEMAS[json.type]) || ServerFrame;
  const r = schema.safeParse(json) as { success: true; data: ServerFrame } | { success: false; error: z.ZodError };
  if (!r.success) throw new Error(r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return r.data;
}

export function createClient(options: ClientOptions = {}): ParleyClient {
  const sdkInfo = options.sdk ?? { name: SDK_NAME, version: SDK_VERSION };
  const events = createEvents();
  const handoffHandlers = new Set<HandoffHandler>();
  const customerMessageHandlers = new Set<CustomerMessageHandler>();

  const registerFrame = (): ClientFrame => ({
    type: 'register',
    functions: functions.declarations(),
    sdk: sdkInfo,
    sendProvider: messages.sendProvider(),
  });
  const connection = createConnection(options, {
    emit: events.emit,
    registerFrame,
    onFrame: (raw) => onFrame(raw),
    onClose: () => messages.disconnected(),
  });
  const send = connection.send;
  const functions = createFunctionRegistry(send, events.report);
  const messages = createMessages({ send, registered: connection.isRegistered, ingestTimeoutMs: options.ingestTimeoutMs ?? 30_000 });
  const reRegister = () => {
    if (connection.connected()) send(registerFrame());
  };

  const onFrame = (raw: string) => {
    let parsed: ServerFrame;
    try {
      parsed = parseServerFrame(raw);
    } catch (err) {
      send({ type: 'error', code: 'bad_frame', message: `SDK could not read a frame: ${(err as Error).message}`.slice(0, 1000) });
      return;
    }
    switch (parsed.type) {
      case 'registered':
        return connection.registered(parsed.functions);
      case 'invoke':
        return functions.onInvoke(parsed);
      case 'send':
        return void messages.onSendFrame(parsed);
      case 'summarize':
        return void functions.onSummarize(parsed);
      case 'ack':
        return messages.onAck(parsed);
      case 'handoff': {
        const { type: _, ...notice } = parsed;
        return events.notify(handoffHandlers, notice);
      }
      case 'customer_message': {
        const { type: _, ...notice } = parsed;
        return events.notify(customerMessageHandlers, notice);
      }
      case 'error':
        events.emit('error', new ParleyConnectionError(`Parley reported ${parsed.code}: ${parsed.message}`));
        return;
    }
  };

  const client: ParleyClient = {
    expose(name, opts, handler) {
      functions.expose(name, opts, handler);
      if (connection.isRegistered()) reRegister();
      return client;
    },
    listen: (o) => connection.listen(o),
    onSend(handler) {
      if (messages.onSend(handler) && connection.isRegistered()) reRegister();
      return client;
    },
    ingest: (message) => messages.ingest(message),
    onHandoff(handler) {
      handoffHandlers.add(handler);
      return client;
    },
    onCustomerMessage(handler) {
      customerMessageHandlers.add(handler);
      return client;
    },
    conversations: createConversations(connection.target),
    downloadMedia(mediaId, options) {
      const target = connection.target();
      if (!target) return Promise.reject(new ParleyMediaError('Call listen() first: downloadMedia uses its url and secret', 0, 'not_listening'));
      return downloadMedia(target, mediaId, options);
    },
    on: (event, listener) => events.on(event, listener),
    close: () => connection.close(),
    get connected() {
      return connection.connected();
    },
    get registered() {
      return connection.isRegistered();
    },
  };
  return client;
}
