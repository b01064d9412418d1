// The SDK client's public shapes: what an integrator passes in (options, handlers, messages) and gets back (the
// `ParleyClient`, its events). The parts that implement them: connection.ts (dialling, reconnects), functions.ts
// (exposed functions and their calls), messages.ts (outbound sends and ingest), client.ts (the whole).
import type { z } from 'zod';
import type { AckFrame, SummaryTemplates, FunctionMode } from './protocol.ts';
import type { Parameters } from './schema.ts';
import type { BackoffOptions } from './backoff.ts';
import type { DownloadedMedia, DownloadMediaOptions } from './media.ts';
import type { CustomerMessageNotice, HandoffNotice } from './agent-api.ts';
import type { Conversations } from './conversations.ts';
import type { SummaryFunction } from './localized.ts';

export type HandoffHandler = (notice: HandoffNotice) => void | Promise<void>;
export type CustomerMessageHandler = (notice: CustomerMessageNotice) => void | Promise<void>;

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
   * Human handoff, live: a conversation was handed to a person (`phase: 'requested'`), nobody of the team wrote within
   * `handoff.offline_after_minutes` and the customer was told so (`offline`, once per handoff, with `since`), or it
   * was given back (`released`). Sent to every connected SDK while it is connected (an SDK that connects later does
   * not get earlier ones); for a durable record, use the signed webhooks.
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
