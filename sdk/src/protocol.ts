// Wire protocol between the Parley server and the backend SDK (`GET /sdk`).
// One zod schema per frame; the server and the SDK both parse with these.
import { z } from 'zod';
import { CustomerMessageNotice, HandoffNotice } from './agent-api.ts';
import { LocaleTag } from './locale-tag.ts';

export { LocaleTag };

export const FunctionMode = z.enum(['read', 'write', 'destructive']);
export type FunctionMode = z.infer<typeof FunctionMode>;

const name = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, 'letters, digits, _ and -, not starting with a digit');
// An invoke id is `<conversationId>:<messageId>:<step>:<callId>`: with a real WhatsApp message id
// (`wa:wamid.HBgL…`, 60+ characters) and an LLM call id it passes 128, which refused every tool call
// on a real WhatsApp message (the invoke then timed out).
const id = z.string().min(1).max(512);
const channel = z.enum(['web', 'whatsapp']);
/**
 * A function's own confirmation summaries, per locale: templates whose `{argName}` placeholders take the call's
 * arguments (`{ en: 'Cancel order {orderId}', es: 'Cancelar el pedido {orderId}' }`).
 */
export const SummaryTemplates = z.record(LocaleTag, z.string().min(1).max(300)).refine((t) => Object.keys(t).length <= 32, 'at most 32 locales');
export type SummaryTemplates = z.infer<typeof SummaryTemplates>;

export const FunctionDeclaration = z.object({
  name,
  description: z.string().max(2000).default(''),
  parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
  mode: FunctionMode.default('read'),
  /**
   * Offered to visitors' turns (customers who have not signed in) too. `write` and `destructive` functions are never
   * offered to a visitor, whatever this says.
   */
  visitors: z.boolean().default(false),
  /** The confirmation card's words per locale (templates); absent: Parley's built-in English summary. */
  summary: SummaryTemplates.optional(),
  /**
   * The backend words the summary itself (a function of the arguments and the locale, run by the SDK): Parley asks
   * with a `summarize` frame before a confirmation and waits a short deadline, then falls back to `summary`.
   */
  summarizes: z.boolean().default(false),
});
export type FunctionDeclaration = z.infer<typeof FunctionDeclaration>;

export const InvokeContext = z.object({
  customerId: z.string(),
  externalId: z.string().optional(),
  channel,
  conversationId: z.string(),
  /**
   * The customer proved who they are: signed in with an identity token or a session token, or writing from their
   * WhatsApp number. False for a visitor (the widget with no sign-in) and an anonymous development session.
   */
  verified: z.boolean().default(false),
  /** The customer's locale (the widget's browser language, or the WhatsApp default); absent when unknown. */
  locale: LocaleTag.optional(),
});
export type InvokeContext = z.infer<typeof InvokeContext>;
/** What a caller gives: `verified` unset means false. */
export type InvokeContextInput = z.input<typeof InvokeContext>;

export const ToolError = z.object({ message: z.string().max(4000), code: z.string().max(128).optional() });
/** What the customer reads once a confirmed action ran ("Order 1001 cancelled"), in their locale. */
export const Receipt = z.string().min(1).max(500);
export type ToolError = z.infer<typeof ToolError>;

// SDK → server
export const RegisterFrame = z.object({
  type: z.literal('register'),
  functions: z.array(FunctionDeclaration).max(256),
  sdk: z.object({ name: z.string().max(64), version: z.string().max(32) }).default({ name: 'unknown', version: '0' }),
  sendProvider: z.boolean().default(false),
});
// Discriminated on `ok` so a validation error names the failing field (a plain union says only "Invalid input").
export const ResultFrame = z.discriminatedUnion('ok', [
  z.object({ type: z.literal('result'), id, ok: z.literal(true), data: z.unknown(), receipt: Receipt.optional() }),
  z.object({ type: z.literal('result'), id, ok: z.literal(false), error: ToolError, receipt: Receipt.optional() }),
]);
/** The answer to `summarize`: the summary in the asked locale (absent: the backend has none; Parley falls back). */
export const SummaryFrame = z.object({ type: z.literal('summary'), id, text: z.string().min(1).max(300).optional() });
export const SentFrame = z.object({
  type: z.literal('sent'),
  id,
  ok: z.boolean(),
  messageId: z.string().max(256).optional(),
  error: z.string().max(4000).optional(),
});
export const IngestFrame = z.object({
  type: z.literal('ingest'),
  id,
  channel,
  from: z.string().min(1).max(64),
  text: z.string().min(1).max(8000),
  messageId: z.string().max(256).optional(),
});

// server → SDK
export const RegisteredFrame = z.object({ type: z.literal('registered'), functions: z.number().int() });
export const InvokeFrame = z.object({ type: z.literal('invoke'), id, name, args: z.unknown(), context: InvokeContext });
export const SendFrame = z.object({ type: z.literal('send'), id, channel, to: z.string(), content: z.string() });
/** Asks the backend for a `summarizes` function's confirmation summary of these arguments, in this locale. */
export const SummarizeFrame = z.object({ type: z.literal('summarize'), id, name, args: z.unknown(), locale: LocaleTag });
export const AckFrame = z.object({ type: z.literal('ack'), id, ok: z.boolean(), error: z.string().optional() });
/** Human handoff, live (to every registered SDK): a conversation was handed to a person, or given back. */
export const HandoffFrame = HandoffNotice.extend({ type: z.literal('handoff') });
/** Human handoff, live: a customer wrote in a conversation a person has (the model does not answer it). */
export const CustomerMessageFrame = CustomerMessageNotice.extend({ type: z.literal('customer_message') });

// both
export const ErrorFrame = z.object({ type: z.literal('error'), code: z.string(), message: z.string() });

export const ClientFrame = z.union([RegisterFrame, ResultFrame, SentFrame, IngestFrame, SummaryFrame, ErrorFrame]);
export const ServerFrame = z.union([RegisteredFrame, InvokeFrame, SendFrame, AckFrame, HandoffFrame, CustomerMessageFrame, SummarizeFrame, ErrorFrame]);

export type RegisterFrame = z.infer<typeof RegisterFrame>;
export type ResultFrame = z.infer<typeof ResultFrame>;
export type SentFrame = z.infer<typeof SentFrame>;
export type IngestFrame = z.infer<typeof IngestFrame>;
export type RegisteredFrame = z.infer<typeof RegisteredFrame>;
export type InvokeFrame = z.infer<typeof InvokeFrame>;
export type SendFrame = z.infer<typeof SendFrame>;
export type AckFrame = z.infer<typeof AckFrame>;
export type HandoffFrame = z.infer<typeof HandoffFrame>;
export type CustomerMessageFrame = z.infer<typeof CustomerMessageFrame>;
export type ErrorFrame = z.infer<typeof ErrorFrame>;
export type SummaryFrame = z.infer<typeof SummaryFrame>;
export type SummarizeFrame = z.infer<typeof SummarizeFrame>;
export type ClientFrame = z.infer<typeof ClientFrame>;
export type ServerFrame = z.infer<typeof ServerFrame>;

/**
 * Close codes used on the SDK socket: the wire contract. How long the server waits for `register`
 * is server behaviour, owned by machines/sdkConnection.ts (which may not import sdk/); the
 * gateway test checks that its close code is `registerTimeout`.
 */
export const CloseCodes = {
  goingAway: 1001,
  tooBig: 1009,
  registerTimeout: 4008,
} as const;

// Tool results can be larger than widget frames; still bounded (oversize closes 1009).
export const MAX_FRAME_BYTES = 1024 * 1024;
