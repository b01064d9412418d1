// Wire protocol between the widget (browser) and the server (`GET /widget/ws`).
// The server validates with these schemas; the widget imports only the types
// (`import type`), so no zod code reaches the browser bundle.
import { z } from 'zod';
import { LocaleTag } from './locale-tag.ts';

const id = z.string().min(1).max(128);

// widget → server
/**
 * `authToken`: an identity token (a JWT the integrator's backend signs; `customerId` optional) or a session token
 * (magic link; `customerId` required). With `identity.visitors`, no token: a visitor, who comes back with the
 * `visitorToken` of their last `ready` (sent together with an `authToken`, the visitor's conversation joins the
 * customer's). `email` (with `customerId`): anonymous development sessions only.
 */
export const WidgetInitFrame = z.object({
  type: z.literal('init'),
  customerId: z.string().min(1).max(128).optional(),
  authToken: z.string().min(1).max(4096).optional(),
  visitorToken: z.string().min(1).max(512).optional(),
  email: z.string().email().max(320).optional(),
  /**
   * The customer's locale (the browser's language, or the page's `data-locale`): stored with the customer; the model
   * answers in it and confirmation summaries are worded in it.
   */
  locale: LocaleTag.optional(),
});
import { WIDGET_MAX_MESSAGE_CHARS } from './widget-limits.ts';

export { WIDGET_MAX_MESSAGE_CHARS };
export const WidgetMessageFrame = z.object({ type: z.literal('message'), id, text: z.string().min(1).max(WIDGET_MAX_MESSAGE_CHARS) });
export const WidgetConfirmFrame = z.object({ type: z.literal('confirm'), id, approve: z.boolean() });
/**
 * The email address a customer waiting for a person leaves for a reply (the form a `handoff_notice` with `askEmail`
 * offers). `id`: the client's, echoed by `contact_saved` (or by an `error` with code `invalid_email`).
 */
export const WidgetContactFrame = z.object({ type: z.literal('contact'), id, email: z.string().min(1).max(320) });
/** The customer's answer to "Did that answer your question?" (docs/outcomes.md: yes resolves the conversation, confirmed). */
export const WidgetResolutionFrame = z.object({ type: z.literal('resolution'), answer: z.enum(['yes', 'no']) });
export const WIDGET_MAX_RATING_COMMENT_CHARS = 1000;
/** The customer's rating of the conversation (CSAT, `outcomes.csat`): 1–5 and an optional comment. */
export const WidgetRatingFrame = z.object({
  type: z.literal('rating'),
  score: z.number().int().min(1).max(5),
  comment: z.string().max(WIDGET_MAX_RATING_COMMENT_CHARS).optional(),
});
/**
 * "Talk to a person", offered after "No" to "Did that answer your question?" when `ready.feedback.handoff`: the
 * conversation is handed to a person like any other handoff (the `status` frame follows). Refused with `error`
 * `already_with_person` (a person has it already: nothing changes), `not_enabled` (handoff is off here) or
 * `no_conversation` (nothing written yet).
 */
export const WidgetHandoffFrame = z.object({ type: z.literal('handoff') });
export const WidgetClientFrame = z.discriminatedUnion('type', [
  WidgetInitFrame,
  WidgetMessageFrame,
  WidgetConfirmFrame,
  WidgetContactFrame,
  WidgetResolutionFrame,
  WidgetRatingFrame,
  WidgetHandoffFrame,
]);

// server → widget
/** `cancelled`: a person took the conversation over while the confirmation waited (`reason: 'handoff'`); nothing ran. */
export const ConfirmationOutcome = z.enum(['approved', 'denied', 'expired', 'cancelled']);
/** A person of the integrator's team (human handoff). */
export const AgentAuthor = z.object({ name: z.string() });
/** Who answers: the assistant, or a person (`agent`: the last one who wrote, once one has). */
export const ConversationMode = z.object({ mode: z.enum(['human', 'assistant']), agent: AgentAuthor.optional() });
/**
 * A source an assistant's reply cites as "[n]": an article of the integrator's knowledge base that was retrieved while
 * the reply was written (issue 36). `url` is the article's own (absent for an article without one), never the model's.
 */
export const MessageSource = z.object({ n: z.number().int().min(1), title: z.string().max(500), url: z.string().max(2048).optional() });
/** At most this many sources on one message. */
export const MAX_MESSAGE_SOURCES = 20;
const sources = z.array(MessageSource).max(MAX_MESSAGE_SOURCES).optional();

/**
 * What a confirmed action came to once the backend ran it: `ok`, and the words the customer reads ("Order 1001
 * cancelled" / "Could not cancel order 1002: it has already shipped"), in their locale.
 */
export const ActionReceipt = z.object({ ok: z.boolean(), text: z.string() });
/**
 * `confirmation` entries are answered confirmations: `text` is the summary, `outcome` what became of it, and for an
 * approved one that ran, `receipt` its result. `agent` entries are a person's messages, with their `author`.
 */
export const HistoryEntry = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant', 'confirmation', 'agent']),
  text: z.string(),
  at: z.number(),
  proactive: z.boolean().optional(),
  outcome: ConfirmationOutcome.optional(),
  receipt: ActionReceipt.optional(),
  author: AgentAuthor.optional(),
  /** An assistant's reply: the sources it cites. */
  sources,
  /** An assistant's reply that is an apology or an "I don't know", not an answer: "Did that answer…?" is not asked. */
  unanswered: z.literal(true).optional(),
});
/**
 * A line of the history saying who answered from then on, as the `status` frame showed it live: handed to a person
 * (`human`), a person joined (`human` with `agent`), the assistant back (`assistant`). `id`: the live `status` frame's
 * (the same line, never shown twice). `after`: the id of the `history` entry it follows (absent: before them all).
 * `away`: nobody answered in time (`handoff_notice` `offline` was sent): the line does not promise "shortly".
 */
export const HistoryHandoffEntry = z.object({
  id: z.string(),
  mode: z.enum(['human', 'assistant']),
  agent: AgentAuthor.optional(),
  at: z.number(),
  after: z.string().optional(),
  away: z.literal(true).optional(),
});
/**
 * `status`: present while a person has the conversation (absent: the assistant answers). `visitorToken`: the
 * visitor's (keep it and send it with the next `init`); absent for a signed-in customer.
 */
export const WidgetReadyFrame = z.object({
  type: z.literal('ready'),
  customerId: z.string(),
  conversationId: z.string(),
  history: z.array(HistoryEntry),
  /**
   * The handoff lines among `history`'s entries (each placed by its `after`). Beside `history`, not in it: a widget
   * older than them ignores the field, where it would show an entry of an unknown kind as an empty message.
   */
  handoffs: z.array(HistoryHandoffEntry).optional(),
  status: ConversationMode.optional(),
  visitorToken: z.string().optional(),
  /**
   * `resolution`: show "Did that answer your question?" under answers; `rating`: ask for a rating now (`outcomes.csat`);
   * `handoff`: after a "No", offer "Talk to a person" (the `handoff` frame; `handoff.enabled`).
   */
  feedback: z.object({ resolution: z.boolean(), rating: z.boolean(), handoff: z.boolean().optional() }).optional(),
});
export const WidgetTypingFrame = z.object({ type: z.literal('typing'), on: z.boolean() });
/** A person of the team is typing a reply (the agent inbox's composer), or stopped: shown with their name. */
export const WidgetAgentTypingFrame = z.object({ type: z.literal('agent_typing'), on: z.boolean(), agent: AgentAuthor });
/**
 * A piece of the reply being written, under the id its final `message` will have: append `text`
 * (after emptying what was shown for `id` when `reset`). Live only; the `message` that follows is
 * the whole reply and the only thing stored.
 */
export const WidgetDeltaFrame = z.object({ type: z.literal('delta'), id: z.string(), text: z.string(), reset: z.boolean().optional() });
/**
 * A message for the customer: the assistant's, or (`role: 'agent'`, with `author`) a person's. `sources`: what an
 * assistant's reply cites ("[1]" in `text` is `sources[0]`), kept in the history too. `unanswered`: the reply is an
 * apology or an "I don't know" (the knowledge base had nothing), not an answer: "Did that answer…?" is not asked.
 */
export const WidgetAssistantMessageFrame = z.object({
  type: z.literal('message'),
  id: z.string(),
  role: z.enum(['assistant', 'agent']),
  text: z.string(),
  at: z.number(),
  proactive: z.boolean().optional(),
  author: AgentAuthor.optional(),
  sources,
  unanswered: z.literal(true).optional(),
});
/**
 * Who answers now: `human` when the conversation is handed to a person (again with `agent` when one writes for the
 * first time: "Alex joined"), `assistant` when the assistant has it back.
 */
export const WidgetStatusFrame = z.object({
  type: z.literal('status'),
  mode: z.enum(['human', 'assistant']),
  agent: AgentAuthor.optional(),
  at: z.number(),
  /** The line's id: the same as its `ready.handoffs` entry after a reload. */
  id: z.string().optional(),
});
/**
 * What the customer waiting for a person can expect (until an agent writes): `closed` — outside the team's opening
 * hours, back at `backAt` (epoch ms; shown in the customer's locale, in `timeZone`'s clock when the widget cannot
 * tell theirs); `open` — inside them, `expectedWaitMs` the usual time to a first reply (absent: not known yet);
 * `offline` — no one answered within `handoff.offline_after_minutes`: the team will reply by email or here.
 * `askEmail`: offer the email form (`contact` frame); `contactEmail`: the address already left.
 */
export const WidgetHandoffNoticeFrame = z.object({
  type: z.literal('handoff_notice'),
  kind: z.enum(['closed', 'open', 'offline']),
  backAt: z.number().optional(),
  timeZone: z.string().optional(),
  expectedWaitMs: z.number().int().nonnegative().optional(),
  askEmail: z.boolean(),
  contactEmail: z.string().optional(),
  at: z.number(),
});
/** The email address of a `contact` frame is stored with the customer (sent to every open widget of theirs). */
export const WidgetContactSavedFrame = z.object({ type: z.literal('contact_saved'), id: z.string(), email: z.string() });
export const WidgetConfirmRequestFrame = z.object({
  type: z.literal('confirm'),
  id: z.string(),
  name: z.string(),
  args: z.unknown(),
  summary: z.string(),
});
/**
 * A confirmation was answered (in this tab or another), expired, or was cancelled because a person took over
 * (`outcome: 'cancelled'`, `reason: 'handoff'`): the widget turns its card into a receipt.
 */
export const WidgetConfirmationFrame = z.object({
  type: z.literal('confirmation'),
  id: z.string(),
  outcome: ConfirmationOutcome,
  reason: z.literal('handoff').optional(),
  at: z.number(),
});
/**
 * An approved action ran: its result (`id` is the confirmation's). The widget shows it in place of "You approved":
 * a success, or a failure the backend reported (never a success mark next to a refused action).
 */
export const WidgetReceiptFrame = ActionReceipt.extend({ type: z.literal('receipt'), id: z.string(), at: z.number() });
/**
 * `id`: the client id of the customer message this refuses (`rate_limited`, `too_long`, `unavailable`, `bad_frame`,
 * `not_initialized`, `internal` for a `message` frame): that message is NOT stored; send it again with the same id.
 * `retryAfterMs` (`rate_limited`): how long until a message would be accepted.
 */
export const WidgetErrorFrame = z.object({
  type: z.literal('error'),
  code: z.string(),
  message: z.string(),
  id: z.string().optional(),
  retryAfterMs: z.number().int().nonnegative().optional(),
});
export const WidgetAckFrame = z.object({ type: z.literal('ack'), id: z.string() });
/** The conversation has an outcome and `outcomes.csat` is on: ask the customer for a rating. */
export const WidgetRateFrame = z.object({ type: z.literal('rate') });
/** A `resolution` or `rating` frame was stored. */
export const WidgetNotedFrame = z.object({ type: z.literal('noted'), of: z.enum(['resolution', 'rating']) });
export const WidgetServerFrame = z.discriminatedUnion('type', [
  WidgetReadyFrame,
  WidgetAckFrame,
  WidgetTypingFrame,
  WidgetAgentTypingFrame,
  WidgetDeltaFrame,
  WidgetAssistantMessageFrame,
  WidgetConfirmRequestFrame,
  WidgetConfirmationFrame,
  WidgetReceiptFrame,
  WidgetStatusFrame,
  WidgetHandoffNoticeFrame,
  WidgetContactSavedFrame,
  WidgetErrorFrame,
  WidgetRateFrame,
  WidgetNotedFrame,
]);

export type WidgetInitFrame = z.infer<typeof WidgetInitFrame>;
export type WidgetMessageFrame = z.infer<typeof WidgetMessageFrame>;
export type WidgetConfirmFrame = z.infer<typeof WidgetConfirmFrame>;
export type WidgetContactFrame = z.infer<typeof WidgetContactFrame>;
export type WidgetResolutionFrame = z.infer<typeof WidgetResolutionFrame>;
export type WidgetRatingFrame = z.infer<typeof WidgetRatingFrame>;
export type WidgetHandoffFrame = z.infer<typeof WidgetHandoffFrame>;
export type WidgetRateFrame = z.infer<typeof WidgetRateFrame>;
export type WidgetNotedFrame = z.infer<typeof WidgetNotedFrame>;
export type WidgetClientFrame = z.infer<typeof WidgetClientFrame>;
export type WidgetHandoffNoticeFrame = z.infer<typeof WidgetHandoffNoticeFrame>;
export type WidgetContactSavedFrame = z.infer<typeof WidgetContactSavedFrame>;
export type HistoryEntry = z.infer<typeof HistoryEntry>;
export type HistoryHandoffEntry = z.infer<typeof HistoryHandoffEntry>;
export type MessageSource = z.infer<typeof MessageSource>;
export type WidgetReadyFrame = z.infer<typeof WidgetReadyFrame>;
export type WidgetTypingFrame = z.infer<typeof WidgetTypingFrame>;
export type WidgetAgentTypingFrame = z.infer<typeof WidgetAgentTypingFrame>;
export type WidgetDeltaFrame = z.infer<typeof WidgetDeltaFrame>;
export type WidgetAssistantMessageFrame = z.infer<typeof WidgetAssistantMessageFrame>;
export type WidgetConfirmRequestFrame = z.infer<typeof WidgetConfirmRequestFrame>;
export type WidgetConfirmationFrame = z.infer<typeof WidgetConfirmationFrame>;
export type ConfirmationOutcome = z.infer<typeof ConfirmationOutcome>;
export type ActionReceipt = z.infer<typeof ActionReceipt>;
export type WidgetReceiptFrame = z.infer<typeof WidgetReceiptFrame>;
export type WidgetErrorFrame = z.infer<typeof WidgetErrorFrame>;
export type WidgetStatusFrame = z.infer<typeof WidgetStatusFrame>;
export type ConversationMode = z.infer<typeof ConversationMode>;
export type AgentAuthor = z.infer<typeof AgentAuthor>;
export type WidgetServerFrame = z.infer<typeof WidgetServerFrame>;

export const WIDGET_MAX_FRAME_BYTES = 64 * 1024;
/** server → widget `ack`: the message with this client id is stored durably and will be answered. */
export type WidgetAckFrame = z.infer<typeof WidgetAckFrame>;
