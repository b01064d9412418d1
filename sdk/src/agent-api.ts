// The agent API (human handoff) and Parley's outbound webhooks: one zod schema per message, used by the server to
// validate what it receives and by the SDK for what it sends and reads.
import { z } from 'zod';

export const AgentAuthor = z.object({ name: z.string().trim().min(1).max(80) });
export type AgentAuthor = z.infer<typeof AgentAuthor>;

/** `POST /conversations/:conversationId/handoff` */
export const HandoffRequest = z.object({ reason: z.string().trim().min(1).max(500).optional() }).strict();
export type HandoffRequest = z.infer<typeof HandoffRequest>;

/**
 * `POST /conversations/:conversationId/messages`. `id`: the client's idempotency key (or the `Idempotency-Key`
 * header): a retry with the same key is stored and shown once, and answered as the first post was.
 */
export const IdempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');
export const AgentReplyRequest = z.object({ text: z.string().trim().min(1).max(4096), author: AgentAuthor, id: IdempotencyKey.optional() }).strict();
export type AgentReplyRequest = z.infer<typeof AgentReplyRequest>;

export const AgentReplyResponse = z.object({ id: z.string(), conversationId: z.string(), at: z.number() });
export type AgentReplyResponse = z.infer<typeof AgentReplyResponse>;

/** The answer of `handoff` and `release`: the conversation's state afterwards. */
export const ConversationStateResponse = z.object({ conversationId: z.string(), state: z.string() });
export type ConversationStateResponse = z.infer<typeof ConversationStateResponse>;

export const HandoffInfo = z.object({
  since: z.number(),
  source: z.enum(['model', 'api']),
  reason: z.string().optional(),
  agent: AgentAuthor.optional(),
  /** The signed-in agent who asked for the handoff through the API. */
  requestedBy: z.string().optional(),
  /** When the customer was told no one is free yet (`handoff.offline_after_minutes`). */
  offlineAt: z.number().optional(),
});

export const ConversationMessage = z.object({
  id: z.string(),
  /** Its place in the conversation: pass the first one's as `before` to read older messages. */
  seq: z.number(),
  role: z.enum(['user', 'assistant', 'agent', 'confirmation', 'handoff']),
  text: z.string(),
  at: z.number(),
  author: AgentAuthor.optional(),
  proactive: z.boolean().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

/** `GET /conversations/:conversationId` */
export const ConversationView = z.object({
  conversationId: z.string(),
  channel: z.enum(['web', 'whatsapp']),
  state: z.string(),
  handoff: HandoffInfo.optional(),
  customer: z.object({ customerId: z.string(), externalId: z.string(), email: z.string().optional(), phone: z.string().optional() }),
  messages: z.array(ConversationMessage),
  /** Older messages exist: pass this as `before`. */
  nextBefore: z.number().nullable(),
});
export type ConversationView = z.infer<typeof ConversationView>;

/** `GET /conversations?state=withHuman` */
export const ConversationListItem = z.object({
  conversationId: z.string(),
  channel: z.enum(['web', 'whatsapp']),
  state: z.string(),
  customerId: z.string(),
  externalId: z.string().optional(),
  handoff: HandoffInfo.optional(),
  lastMessageAt: z.number().optional(),
});
export const ConversationList = z.object({ items: z.array(ConversationListItem), nextBefore: z.string().nullable() });
export type ConversationList = z.infer<typeof ConversationList>;

export const WEBHOOK_EVENT_TYPES = [
  'handoff.requested',
  'handoff.released',
  'message.customer',
  'message.assistant',
  'message.agent',
  'confirmation.resolved',
  'proactive.accepted',
  'proactive.blocked',
  'whatsapp.status',
  'daemon.verdict',
] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/** The body Parley POSTs to a webhook: `id` is the same on every retry of one event. */
export const WebhookEvent = z.object({
  id: z.string(),
  type: WebhookEventType,
  /** ms since the epoch, when the fact happened. */
  createdAt: z.number(),
  data: z.record(z.string(), z.unknown()),
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;

/** The SDK socket's live notifications for handed-over conversations (server → SDK). */
export const HandoffNotice = z.object({
  conversationId: z.string(),
  customerId: z.string(),
  externalId: z.string().optional(),
  channel: z.enum(['web', 'whatsapp']),
  phase: z.enum(['requested', 'released']),
  reason: z.string().optional(),
  source: z.enum(['model', 'api']).optional(),
  by: z.enum(['agent', 'idle']).optional(),
  at: z.number(),
});
export type HandoffNotice = z.infer<typeof HandoffNotice>;

export const CustomerMessageNotice = z.object({
  conversationId: z.string(),
  customerId: z.string(),
  externalId: z.string().optional(),
  channel: z.enum(['web', 'whatsapp']),
  messageId: z.string(),
  text: z.string(),
  at: z.number(),
});
export type CustomerMessageNotice = z.infer<typeof CustomerMessageNotice>;
