// The agent API (human handoff) and Parley's outbound webhooks: one zod schema per message, used by the server to
// validate what it receives and by the SDK for what it sends and reads.
import { z } from 'zod';
import { MessageSource } from './widget-protocol.ts';

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
  /** An assistant's reply: the knowledge-base articles it cites as "[n]" (the widget's message carries the same). */
  sources: z.array(MessageSource).optional(),
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

/** Conversation outcomes (docs/outcomes.md); `open`: not decided yet. */
export const OUTCOMES = ['resolved_confirmed', 'resolved_assumed', 'handed_over', 'abandoned', 'unresolved'] as const;
/** Why a conversation was handed to a person: the model's `handoff` call states one, an agent may change it. */
export const HANDOFF_REASONS = ['customer_asked', 'missing_knowledge', 'unsupported_request', 'tool_failure', 'policy', 'other'] as const;
/** `PUT /conversations/:id/outcome/reason`: an agent changes a handed-over conversation's reason category. */
export const OutcomeReasonRequest = z.strictObject({ reason: z.enum(HANDOFF_REASONS) });
export type OutcomeReasonRequest = z.infer<typeof OutcomeReasonRequest>;

/**
 * Every webhook event type. An endpoint without an `events` list gets each of them but the opt-in ones
 * (`OPT_IN_WEBHOOK_EVENT_TYPES`), which go only to endpoints whose list names them.
 */
export const WEBHOOK_EVENT_TYPES = [
  'handoff.requested',
  'handoff.offline',
  'handoff.released',
  'message.customer',
  'message.assistant',
  'message.agent',
  'confirmation.resolved',
  'proactive.accepted',
  'proactive.blocked',
  'whatsapp.status',
  'daemon.verdict',
  'conversation.outcome',
] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/**
 * Types added after receivers were written against this list: sent only to an endpoint whose `events` names them, so a
 * receiver on an older SDK (whose `verifyWebhook` refuses a type it does not know) never gets one unasked.
 * `handoff.offline`: no agent wrote within `handoff.offline_after_minutes` of a handoff (`since`, `waitedMinutes`).
 */
export const OPT_IN_WEBHOOK_EVENT_TYPES = ['handoff.offline'] as const satisfies readonly WebhookEventType[];

/** The body Parley POSTs to a webhook: `id` is the same on every retry of one event. */
export const WebhookEvent = z.object({
  id: z.string(),
  type: WebhookEventType,
  /** ms since the epoch, when the fact happened. */
  createdAt: z.number(),
  data: z.record(z.string(), z.unknown()),
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;

/**
 * The SDK socket's live notifications for handed-over conversations (server → SDK). `requested` (with `source`,
 * `reason?`): a person has it now. `offline` (with `since`, when that handoff started): no agent wrote within
 * `handoff.offline_after_minutes` and the customer was told no one is free yet; at most once per handoff.
 * `released` (with `by`; `resolved: true` when an agent resolved it): the assistant has it back.
 */
export const HandoffNotice = z.object({
  conversationId: z.string(),
  customerId: z.string(),
  externalId: z.string().optional(),
  channel: z.enum(['web', 'whatsapp']),
  phase: z.enum(['requested', 'offline', 'released']),
  reason: z.string().optional(),
  source: z.enum(['model', 'api']).optional(),
  by: z.enum(['agent', 'idle']).optional(),
  /** `released` only: an agent resolved the conversation (the inbox's "resolve"); absent on a plain release. */
  resolved: z.literal(true).optional(),
  /** `offline` only: when the handoff started (ms since the epoch); `at - since` is how long the customer has waited. */
  since: z.number().optional(),
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
