// The Parley backend SDK client: dials out to Parley's /sdk WebSocket, registers
// the exposed functions, answers invokes, delivers outbound messages (`onSend`)
// and hands inbound ones over (`ingest`). Reconnects by itself.
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import {
  FunctionDeclaration,
  MAX_FRAME_BYTES,
  ServerFrame,
  AckFrame,
  ErrorFrame,
  InvokeFrame,
  RegisteredFrame,
  SendFrame,
  HandoffFrame,
  CustomerMessageFrame,
  SummarizeFrame,
  type ClientFrame,
  type SummaryTemplates,
  type FunctionMode,
  type ToolError,
} from './protocol.ts';
import { prepareParameters, type Parameters, type PreparedParameters } from './schema.ts';
import { backoffDelay, type BackoffOptions } from './backoff.ts';
import { downloadMedia, ParleyMediaError, type DownloadedMedia, type DownloadMediaOptions } from './media.ts';
import type { z } from 'zod';
import type { CustomerMessageNotice, HandoffNotice } from './agent-api.ts';
import { createConversations, type Conversations } from './conversations.ts';
import { errorReceipt, splitResult, summaryDeclaration, type SummaryFunction } from './localized.ts';

export type HandoffHandler = (notice: HandoffNotice) => void | Promise<void>;
export type CustomerMessageHandler = (notice: CustomerMessageNotice) => void | Promise<void>;

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

export const SDK_NAME = '@parley/sdk';
export const SDK_VERSION = '0.1.0';

export interface InvocationContext {
  /** The invoke id: the same on every retry of one tool call. Use it as an idempotency key for writes. */
  invocationId: string;
  customerId: string;
  externalId?: string;
  channel: 'web' | 'whatsapp';
  conversationId: string;
  /**
   * The customer proved who they are (an identity token, a session token, their WhatsApp number); false for a
   * visitor who has not signed in. Check it before acting on a customer's own data.
   */
  verified: boolean;
  /** The customer's locale (`es`, `es-MX`): the widget's browser language, or the WhatsApp default. Absent when unknown. */
  locale?: string;
}

export interface ExposeOptions<P extends Parameters | undefined = Parameters | undefined> {
  description?: string;
  /** A zod schema (args are validated with it) or a JSON Schema object. */
  parameters?: P;
  /** `read` (default) runs at once; `write` and `destructive` ask the customer to confirm first. */
  mode?: FunctionMode;
  /** Offer it to visitors (not signed in) too; default false. Never applies to `write` and `destructive` functions. */
  visitors?: boolean;
  /**
   * What the confirmation card asks, per locale: templates filled from the arguments (`{ en: 'Cancel order {orderId}',
   * es: 'Cancelar el pedido {orderId}' }`), or a function of the arguments and the customer's locale, run here when
   * Parley asks (it waits `sdk.summary_timeout_ms`, then falls back). Default: Parley's built-in English summary.
   */
  summary?: SummaryTemplates | SummaryFunction<ArgsOf<P>>;
}

type ArgsOf<P> = P extends z.ZodType ? z.output<P> : Record<string, unknown>;
export type FunctionHandler<P> = (args: ArgsOf<P>, context: InvocationContext) => unknown | Promise<unknown>;

export interface OutboundMessage {
  channel: 'web' | 'whatsapp';
  to: string;
  content: string;
}
export type SendHandler = (message: OutboundMessage, meta: { id: string }) => Promise<{ messageId?: string } | void> | { messageId?: string } | void;

export interface IngestMessage {
  channel: 'web' | 'whatsapp';
  from: string;
  text: string;
  messageId?: string;
}

export interface ClientEvents {
  connected: [];
  registered: [{ functions: number }];
  disconnected: [{ code: number; reason: string }];
  /** Something went wrong that the client handles itself (refused connection, server error frame, …). */
  error: [Error];
}

export interface ClientOptions {
  /** Reported to the server in `register.sdk` (defaults to this package). */
  sdk?: { name: string; version: string };
  backoff?: BackoffOptions;
  /** Reconnect when the server has been silent (no ping, no frame) this long. Default 75 s (the server pings every 30 s). */
  heartbeatTimeoutMs?: number;
  /** How long `ingest` waits for its ack. Default 30 s. */
  ingestTimeoutMs?: number;
  handshakeTimeoutMs?: number;
}

export interface ListenOptions {
  secret: string;
  /** `ws://host:port/sdk`, or the server's base URL (`http://host:port`). */
  url: string;
}

export class ParleyConnectionError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ParleyConnectionError';
  }
}

export interface ParleyClient {
  expose<P extends Parameters | undefined>(name: string, options: ExposeOptions<P>, handler: FunctionHandler<P>): ParleyClient;
  /** Connects and registers; resolves on the first `registered`. Rejects when the first attempt is refused with 401. */
  listen(options: ListenOptions): Promise<{ functions: number }>;
  onSend(handler: SendHandler): ParleyClient;
  ingest(message: IngestMessage): Promise<AckFrame>;
  /**
   * A file a customer sent on WhatsApp (the `mediaId` of a media message's content), downloaded by Parley from
   * Meta with the channel's token. Uses the `url` and `secret` given to `listen`. Rejects with `ParleyMediaError`.
   */
  downloadMedia(mediaId: string, options?: DownloadMediaOptions): Promise<DownloadedMedia>;
  on<E extends keyof ClientEvents>(event: E, listener: (...args: ClientEvents[E]) => void): () => void;
  /**
   * Human handoff, live: a conversation was handed to a person (`phase: 'requested'`) or given back (`released`).
   * Sent to every connected SDK while it is connected; for a durable record, use the signed webhooks.
   */
  onHandoff(handler: HandoffHandler): ParleyClient;
  /** Human handoff, live: a customer wrote in a conversation a person has (the model does not answer it). */
  onCustomerMessage(handler: CustomerMessageHandler): ParleyClient;
  /** The agent API: reply as a person, release, hand over, read, list the inbox (HTTP, with `listen`'s url and secret). */
  readonly conversations: Conversations;
  /** Stops reconnecting and closes the socket. */
  close(): Promise<void>;
  readonly connected: boolean;
  readonly registered: boolean;
}

/** `http://h:p` → `ws://h:p/sdk`; `ws://h:p/sdk` as is. */
export function sdkUrl(url: string): string {
  const u = new URL(url);
  if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new Error(`Unsupported URL scheme "${u.protocol}" (use ws:, wss:, http: or https:)`);
  if (!u.pathname.endsWith('/sdk')) u.pathname = `${u.pathname.replace(/\/$/, '')}/sdk`;
  return u.toString();
}

function toolError(err: unknown): ToolError {
  const e = err as { message?: unknown; code?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : 'handler_error';
  return { message: message.slice(0, 4000), code: code.slice(0, 128) };
}

interface Exposed {
  declaration: FunctionDeclaration;
  parameters: PreparedParameters;
  handler: (args: unknown, context: InvocationContext) => unknown;
  summarize?: SummaryFunction<unknown>;
}

export function createClient(options: ClientOptions = {}): ParleyClient {
  const sdkInfo = options.sdk ?? { name: SDK_NAME, version: SDK_VERSION };
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 75_000;
  const ingestTimeoutMs = options.ingestTimeoutMs ?? 30_000;

  const functions = new Map<string, Exposed>();
  const listeners = new Map<keyof ClientEvents, Set<(...args: any[]) => void>>();
  const inflight = new Map<string, Promise<ClientFrame>>();
  const pendingIngests = new Map<string, { resolve: (a: AckFrame) => void; timer: NodeJS.Timeout }>();

  let sendHandler: SendHandler | undefined;
  const handoffHandlers = new Set<HandoffHandler>();
  const customerMessageHandlers = new Set<CustomerMessageHandler>();
  /** A handler's failure is the integrator's: reported as an `error` event, never a crash. */
  const notify = <T>(handlers: Set<(n: T) => void | Promise<void>>, notice: T) => {
    for (const h of handlers) {
      try {
        void Promise.resolve(h(notice)).catch((err: unknown) => emit('error', err instanceof Error ? err : new Error(String(err))));
      } catch (err) {
        emit('error', err instanceof Error ? err : new Error(String(err)));
      }
    }
  };
  let target: { url: string; secret: string } | undefined;
  let ws: WebSocket | undefined;
  let isRegistered = false;
  let closed = false;
  let attempt = 0; // consecutive failed attempts since the last register
  let everRegistered = false;
  let connects = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  let lastHeard = 0;
  let listening:
    { promise: Promise<{ functions: number }>; resolve: (v: { functions: number }) => void; reject: (e: Error) => void; settled: boolean } | undefined;

  const emit = <E extends keyof ClientEvents>(event: E, ...args: ClientEvents[E]) => {
    for (const l of listeners.get(event) ?? []) {
      try {
        l(...args);
      } catch {
        /* a listener's failure is its own */
      }
    }
  };

  const send = (frame: ClientFrame): boolean => {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(frame));
    return true;
  };

  const registerFrame = (): ClientFrame => ({
    type: 'register',
    functions: [...functions.values()].map((f) => f.declaration),
    sdk: sdkInfo,
    sendProvider: !!sendHandler,
  });

  const reRegister = () => {
    if (ws?.readyState === WebSocket.OPEN) send(registerFrame());
  };

  // Cheaper than re-arming a timer per frame: note when the server was last heard, check periodically.
  const heard = () => {
    lastHeard = Date.now();
  };
  const startWatchdog = (socket: WebSocket) => {
    clearInterval(watchdog);
    heard();
    watchdog = setInterval(
      () => {
        if (Date.now() - lastHeard >= heartbeatTimeoutMs) socket.terminate();
      },
      Math.max(50, Math.floor(heartbeatTimeoutMs / 5)),
    );
    watchdog.unref();
  };

  // Returns the result frame directly when the handler is synchronous (no promise hops), a promise otherwise.
  const runInvoke = (frame: InvokeFrame): ClientFrame | Promise<ClientFrame> => {
    const fn = functions.get(frame.name);
    if (!fn) return { type: 'result', id: frame.id, ok: false, error: { code: 'unknown_function', message: `"${frame.name}" is not exposed by this SDK` } };
    const args = fn.parameters.validate(frame.args);
    if (!args.ok) return { type: 'result', id: frame.id, ok: false, error: { code: 'invalid_args', message: args.message.slice(0, 4000) } };
    const context: InvocationContext = {
      invocationId: frame.id,
      customerId: frame.context.customerId,
      channel: frame.context.channel,
      conversationId: frame.context.conversationId,
      verified: frame.context.verified,
      ...(frame.context.externalId !== undefined ? { externalId: frame.context.externalId } : {}),
      ...(frame.context.locale !== undefined ? { locale: frame.context.locale } : {}),
    };
    const locale = frame.context.locale;
    const ok = (out: unknown): ClientFrame => {
      const { data, receipt } = splitResult(out, locale);
      return { type: 'result', id: frame.id, ok: true, data: data === undefined ? null : data, ...(receipt ? { receipt } : {}) };
    };
    const failed = (err: unknown): ClientFrame => {
      const receipt = errorReceipt(err, locale);
      return { type: 'result', id: frame.id, ok: false, error: toolError(err), ...(receipt ? { receipt } : {}) };
    };
    try {
      const out = fn.handler(args.value, context);
      if (out && typeof (out as PromiseLike<unknown>).then === 'function') return Promise.resolve(out).then(ok, failed);
      return ok(out);
    } catch (err) {
      return failed(err);
    }
  };

  const reply = (frame: InvokeFrame, result: ClientFrame) => {
    try {
      send(result);
    } catch (err) {
      send({ type: 'result', id: frame.id, ok: false, error: { code: 'unserializable_result', message: String((err as Error).message) } });
    }
  };

  const onInvoke = (frame: InvokeFrame) => {
    // The same invoke id again (a retry) while the first run is in flight: answer both from one run.
    const running = inflight.get(frame.id);
    if (running) return void running.then((result) => reply(frame, result));
    const result = runInvoke(frame);
    if (!(result instanceof Promise)) return reply(frame, result);
    inflight.set(frame.id, result);
    void result.then((r) => {
      inflight.delete(frame.id);
      reply(frame, r);
    });
  };

  /** Parley asks a `summarizes` function for its confirmation summary: answered with the text, or none (it falls back). */
  const onSummarize = async (frame: SummarizeFrame) => {
    const fn = functions.get(frame.name);
    const args = fn?.summarize ? fn.parameters.validate(frame.args) : undefined;
    let text: string | undefined;
    try {
      if (fn?.summarize && args?.ok) text = (await fn.summarize(args.value, frame.locale))?.trim().slice(0, 300) || undefined;
    } catch (err) {
      emit('error', err instanceof Error ? err : new Error(String(err)));
    }
    send({ type: 'summary', id: frame.id, ...(text ? { text } : {}) });
  };

  const onSendFrame = async (frame: SendFrame) => {
    if (!sendHandler) return send({ type: 'sent', id: frame.id, ok: false, error: 'This SDK has no onSend handler' });
    try {
      const r = await sendHandler({ channel: frame.channel, to: frame.to, content: frame.content }, { id: frame.id });
      const messageId = r && typeof r.messageId === 'string' ? r.messageId : undefined;
      send({ type: 'sent', id: frame.id, ok: true, ...(messageId ? { messageId } : {}) });
    } catch (err) {
      send({ type: 'sent', id: frame.id, ok: false, error: toolError(err).message });
    }
  };

  const onFrame = (raw: string) => {
    let parsed: ServerFrame;
    try {
      const json = JSON.parse(raw) as { type?: unknown };
      const schema = (typeof json?.type === 'string' && SERVER_SCHEMAS[json.type]) || ServerFrame;
      const r = schema.safeParse(json) as { success: true; data: ServerFrame } | { success: false; error: z.ZodError };
      if (!r.success) throw new Error(r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      parsed = r.data;
    } catch (err) {
      send({ type: 'error', code: 'bad_frame', message: `SDK could not read a frame: ${(err as Error).message}`.slice(0, 1000) });
      return;
    }
    switch (parsed.type) {
      case 'registered': {
        isRegistered = true;
        everRegistered = true;
        attempt = 0;
        emit('registered', { functions: parsed.functions });
        if (listening && !listening.settled) {
          listening.settled = true;
          listening.resolve({ functions: parsed.functions });
        }
        return;
      }
      case 'invoke':
        return onInvoke(parsed);
      case 'send':
        return void onSendFrame(parsed);
      case 'summarize':
        return void onSummarize(parsed);
      case 'ack': {
        const p = pendingIngests.get(parsed.id);
        if (!p) return;
        clearTimeout(p.timer);
        pendingIngests.delete(parsed.id);
        p.resolve(parsed);
        return;
      }
      case 'handoff': {
        const { type: _, ...notice } = parsed;
        return notify(handoffHandlers, notice);
      }
      case 'customer_message': {
        const { type: _, ...notice } = parsed;
        return notify(customerMessageHandlers, notice);
      }
      case 'error':
        emit('error', new ParleyConnectionError(`Parley reported ${parsed.code}: ${parsed.message}`));
        return;
    }
  };

  const failListen = (err: Error) => {
    if (listening && !listening.settled) {
      listening.settled = true;
      listening.reject(err);
    }
  };

  const scheduleReconnect = () => {
    if (closed) return;
    const delay = backoffDelay(attempt++, options.backoff);
    reconnectTimer = setTimeout(connect, delay);
  };

  function connect() {
    if (closed || !target) return;
    connects++;
    const firstAttempt = connects === 1;
    let opened = false;
    let refusal: ParleyConnectionError | undefined;
    const socket = new WebSocket(target.url, {
      headers: { Authorization: `Bearer ${target.secret}` },
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
    });
    ws = socket;

    socket.on('open', () => {
      opened = true;
      startWatchdog(socket);
      emit('connected');
      send(registerFrame());
    });
    socket.on('ping', heard);
    socket.on('message', (data, isBinary) => {
      lastHeard = Date.now();
      if (!isBinary) onFrame(data.toString());
    });
    socket.on('error', (err) => {
      const status = /Unexpected server response: (\d+)/.exec(err.message)?.[1];
      refusal = new ParleyConnectionError(
        status === '401' ? 'Parley refused the SDK secret (401)' : `Could not connect to Parley: ${err.message}`,
        status ? Number(status) : undefined,
      );
    });
    socket.on('close', (code, reasonBuf) => {
      if (ws === socket) ws = undefined;
      clearInterval(watchdog);
      isRegistered = false;
      for (const [id, p] of pendingIngests) {
        clearTimeout(p.timer);
        p.resolve({ type: 'ack', id, ok: false, error: 'disconnected' });
      }
      pendingIngests.clear();
      if (opened) emit('disconnected', { code, reason: reasonBuf.toString() });
      else if (refusal) emit('error', refusal);
      if (closed) return;
      if (refusal?.status === 401 && firstAttempt && !everRegistered) {
        closed = true; // a wrong secret must not spin forever
        failListen(refusal);
        return;
      }
      scheduleReconnect();
    });
  }

  const client: ParleyClient = {
    expose(name, opts, handler) {
      if (functions.has(name)) throw new Error(`"${name}" is already exposed`);
      const parameters = prepareParameters(opts.parameters);
      const declaration = FunctionDeclaration.parse({
        name,
        description: opts.description ?? '',
        parameters: parameters.jsonSchema,
        mode: opts.mode ?? 'read',
        visitors: opts.visitors ?? false,
        ...summaryDeclaration(opts.summary as SummaryTemplates | SummaryFunction<never> | undefined),
      });
      const summarize = typeof opts.summary === 'function' ? (opts.summary as SummaryFunction<unknown>) : undefined;
      functions.set(name, { declaration, parameters, handler: handler as Exposed['handler'], summarize });
      if (isRegistered) reRegister();
      return client;
    },

    listen({ secret, url }) {
      if (listening) return listening.promise;
      let resolve!: (v: { functions: number }) => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<{ functions: number }>((res, rej) => ((resolve = res), (reject = rej)));
      listening = { promise, resolve, reject, settled: false };
      try {
        target = { url: sdkUrl(url), secret };
      } catch (err) {
        failListen(err as Error);
        return promise;
      }
      closed = false;
      connect();
      return promise;
    },

    onSend(handler) {
      const had = !!sendHandler;
      sendHandler = handler;
      if (!had && isRegistered) reRegister();
      return client;
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
      if (!isRegistered || !send(frame)) return Promise.resolve({ type: 'ack', id, ok: false, error: 'not connected' });
      return new Promise<AckFrame>((resolve) => {
        const timer = setTimeout(() => {
          pendingIngests.delete(id);
          resolve({ type: 'ack', id, ok: false, error: 'timeout' });
        }, ingestTimeoutMs);
        timer.unref();
        pendingIngests.set(id, { resolve, timer });
      });
    },

    onHandoff(handler) {
      handoffHandlers.add(handler);
      return client;
    },

    onCustomerMessage(handler) {
      customerMessageHandlers.add(handler);
      return client;
    },

    conversations: createConversations(() => target),

    downloadMedia(mediaId, options) {
      if (!target) return Promise.reject(new ParleyMediaError('Call listen() first: downloadMedia uses its url and secret', 0, 'not_listening'));
      return downloadMedia(target, mediaId, options);
    },

    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => void set.delete(listener);
    },

    async close() {
      closed = true;
      clearTimeout(reconnectTimer);
      clearInterval(watchdog);
      failListen(new ParleyConnectionError('The client was closed before it registered'));
      const socket = ws;
      if (!socket || socket.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
        else socket.close(1000, 'client closed');
        setTimeout(() => (socket.terminate(), resolve()), 2_000).unref();
      });
    },

    get connected() {
      return ws?.readyState === WebSocket.OPEN;
    },
    get registered() {
      return isRegistered;
    },
  };
  return client;
}
