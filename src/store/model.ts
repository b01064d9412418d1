// The records Parley stores, as features see them. Both engines store and return exactly these shapes; how they
// lay them out (LMDB keys, PostgreSQL tables) is theirs.

export type Channel = 'web' | 'whatsapp';

export interface Customer {
  customerId: string;
  externalId: string;
  email?: string;
  phone?: string;
  /** WhatsApp business-scoped user id: a username-only user is reachable by it alone. */
  bsuid?: string;
  createdAt: number;
  /** Proactive messaging consent; unset means not opted in. */
  optIn?: boolean;
  /** Last inbound message time per channel (the WhatsApp 24-hour window reads `whatsapp`). */
  lastInboundAt?: { web?: number; whatsapp?: number };
  /**
   * Meta's phone_number_id of the business number the customer last wrote to on WhatsApp: replies and proactive
   * messages go out from it (unset: `channels.whatsapp.phone_id`).
   */
  businessNumberId?: string;
  /**
   * An email address the customer left for a reply while waiting for a person (issue 35): their own claim, never
   * verified, so never an identity. Written only by `CustomerStore.setContact`; `save` keeps it as stored.
   */
  contact?: { email: string; at: number };
  /**
   * The customer's locale (a language tag: `es`, `es-MX`) as their widget last said (`init.locale`); unset on
   * WhatsApp, where `channels.whatsapp.locale` applies. The model answers in it; confirmations are worded in it.
   */
  locale?: string;
}

/** How a customer is found: the integrator's id, an email (case-insensitive), a WhatsApp phone (E.164) or BSUID. */
export type IdentityKind = 'ext' | 'email' | 'phone' | 'bsuid';

/** Anonymous widget visitors' externalIds (src/customers/anonymous.ts). */
export const ANONYMOUS_PREFIX = 'anon:';

/** Visitors (`identity.visitors`, src/identity/visitors.ts): externalId `visitor:<uuid>`, customerId `vis_<uuid>`. */
export const VISITOR_PREFIX = 'visitor:';
export const VISITOR_ID_PREFIX = 'vis_';
export const isVisitorCustomerId = (customerId: string) => customerId.startsWith(VISITOR_ID_PREFIX);
export const isVisitorExternalId = (externalId: string) => externalId.startsWith(VISITOR_PREFIX);

/**
 * Whether the customer proved who they are (an identity or session token, a WhatsApp number): not a visitor, and not
 * an anonymous development session (it claims an id nobody checked). Tools see it as `context.verified`.
 */
export const isVerifiedCustomer = (c: { customerId: string; externalId?: string }) =>
  !isVisitorCustomerId(c.customerId) && !(c.externalId ?? '').startsWith(ANONYMOUS_PREFIX);

/**
 * The identities that lead to a customer, by kind: its externalId, email, phone and BSUID. An anonymous visitor's
 * email is a claim nobody verified: it stays out of the shared index. Both engines index exactly these.
 */
export function identitiesOf(c: Customer | undefined): Map<IdentityKind, string> {
  const out = new Map<IdentityKind, string>();
  if (!c) return out;
  out.set('ext', c.externalId);
  if (c.email && !c.externalId.startsWith(ANONYMOUS_PREFIX)) out.set('email', c.email);
  if (c.phone) out.set('phone', c.phone);
  if (c.bsuid) out.set('bsuid', c.bsuid);
  return out;
}

export interface PendingConfirmation {
  id: string;
  name: string;
  args: unknown;
  summary: string;
}

export interface ConversationMeta {
  conversationId: string;
  customerId: string;
  externalId?: string;
  channel: Channel;
}

export interface ConversationRecord extends ConversationMeta {
  /** The conversation actor's persisted XState snapshot. */
  snapshot: unknown;
  state: string;
  busy: boolean;
  updatedAt: number;
  lastMessageAt?: number;
  lastCustomerMessageAt?: number;
  pendingConfirmation?: PendingConfirmation;
  /** Set by the reflection daemon when it reviews the conversation; cleared by a new customer message. */
  reviewedAt?: number;
  reflection?: { verdict: 'resolved' | 'unresolved' | 'unclear'; summary: string; at: number };
  /** A follow-up decided by the daemon and not yet handed to the proactive actor (survives a crash). */
  followupPending?: { content: string; decidedAt: number; attempts?: number };
  /** The daemon's attempt to review this state of the conversation (crash safety of the LLM call). */
  reviewAttempt?: { lastMessageAt: number; attempts: number; at: number };
  /** Set while a person has the conversation (state `withHuman`): the agent inbox lists these, newest first. */
  handoff?: HandoffInfo;
}

export interface HandoffInfo {
  /** When it was handed over. */
  since: number;
  /** `model`: the LLM called the `handoff` tool; `api`: the integrator's `POST /conversations/:id/handoff`. */
  source: 'model' | 'api';
  reason?: string;
  /** The signed-in agent who asked for it through the API. */
  requestedBy?: string;
  /** The last agent who wrote (with their id when signed in). */
  agent?: { name: string; agentId?: string };
  /** No agent wrote within `handoff.offline_after_minutes`: the customer was asked for an email address then. */
  offlineAt?: number;
}

/** A conversation record without its snapshot (lists, the dashboard). */
export type ConversationSummary = Omit<ConversationRecord, 'snapshot'>;

/**
 * The record the conversation's writer (the host) writes when another writer (the reflection daemon) wrote it since:
 * the fields that writer sets — its verdict, follow-up and review attempt, and `reviewedAt` unless this write stores a
 * new customer message (which clears it) — are kept from `stored`; the rest is the writer's.
 */
export function keepOthersFields(
  stored: ConversationSummary | undefined,
  record: ConversationRecord,
  messages: Pick<MessageRecord, 'role'>[],
): ConversationRecord {
  if (!stored) return record;
  const { reflection: _r, followupPending: _f, reviewAttempt: _a, reviewedAt, ...own } = record;
  const merged: ConversationRecord = own;
  if (stored.reflection !== undefined) merged.reflection = stored.reflection;
  if (stored.followupPending !== undefined) merged.followupPending = stored.followupPending;
  if (stored.reviewAttempt !== undefined) merged.reviewAttempt = stored.reviewAttempt;
  const kept = messages.some((m) => m.role === 'user') ? reviewedAt : stored.reviewedAt;
  if (kept !== undefined) merged.reviewedAt = kept;
  return merged;
}

/** `agent`: a person of the integrator's team wrote (`data.author`); `handoff`: handed over or back (`data`). */
export type MessageRole = 'user' | 'assistant' | 'tool' | 'confirmation' | 'agent' | 'handoff';

export interface MessageRecord {
  id: string;
  conversationId: string;
  role: MessageRole;
  text: string;
  at: number;
  turnId?: string;
  proactive?: boolean;
  /** tool: name, args, ok; confirmation: name, outcome */
  data?: Record<string, unknown>;
}

export interface MagicLink {
  email: string;
  externalId: string;
  expiresAt: number;
  usedAt?: number;
}

export type AgentRole = 'agent' | 'admin';

/** A person who answers customers (an agent) or also manages the team (an admin). */
export interface AgentAccount {
  agentId: string;
  name: string;
  /** As typed; unique case-insensitively. */
  email: string;
  role: AgentRole;
  disabled: boolean;
  /** `scrypt$N$r$p$salt$hash` (src/agents/passwords.ts); absent until the person sets a password. */
  passwordHash?: string;
  createdAt: number;
}

export type AgentCredentialKind = 'session' | 'key' | 'setPassword';

/** A secret an agent holds (a session, an API key, a set-password link), stored by the SHA-256 of the secret. */
export interface AgentCredential {
  kind: AgentCredentialKind;
  agentId: string;
  createdAt: number;
  /** Absolute end (sessions, set-password links); none for keys. */
  expiresAt?: number;
  /** Sessions: the last request seen (idle expiry), written at most once a minute. */
  lastSeenAt?: number;
  /** Keys: the public id (for listing and DELETE) and the owner's name for it. */
  keyId?: string;
  name?: string;
  /** Set-password links: when it was used (single use). */
  usedAt?: number;
}

export interface Job<P = unknown> {
  id: string;
  seq: number;
  key: string;
  payload: P;
  attempts: number;
  runAt: number;
  enqueuedAt: number;
  lastError?: string;
}

export interface DeadJob<P = unknown> extends Job<P> {
  failedAt: number;
  error: string;
}

/** An accepted WhatsApp send, by the provider's message id. */
export interface DeliveryRecord {
  providerMessageId: string;
  jobId: string;
  sourceId: string;
  customerId: string;
  conversationId?: string;
  to: string;
  status: string;
  sentAt: number;
  updatedAt: number;
  errors?: unknown[];
}

/** A status that arrived before its send was recorded; applied when it is. */
export interface EarlyStatus {
  status: string;
  at: number;
  errors?: unknown[];
}

/** Reviews of one state of a conversation the reflection daemon tries before it gives up on it. */
export const MAX_REVIEW_ATTEMPTS = 3;

/**
 * When a conversation is due for the reflection daemon (its last message's time), or undefined: it has a last
 * message with no verdict yet, and the daemon has not given up on that state. Both engines index this on `put`.
 */
export function reviewDueAt(r: Pick<ConversationRecord, 'lastMessageAt' | 'reviewedAt' | 'reviewAttempt'> | undefined): number | undefined {
  if (r?.lastMessageAt === undefined) return undefined;
  if (r.reviewedAt !== undefined && r.reviewedAt >= r.lastMessageAt) return undefined;
  if (r.reviewAttempt && r.reviewAttempt.lastMessageAt === r.lastMessageAt && r.reviewAttempt.attempts >= MAX_REVIEW_ATTEMPTS) return undefined;
  return r.lastMessageAt;
}

/** An agent as the inbox records them (who holds, resolved or wrote). */
export interface InboxAgent {
  agentId: string;
  name: string;
}

/**
 * A handed-over conversation as the agent inbox keeps it: who holds it (claimed) for which handoff (`handoffSince`,
 * the conversation's `handoff.since`: a hold on an earlier handoff is over), and when and by whom it was resolved.
 */
export interface InboxThread {
  conversationId: string;
  handoffSince: number;
  holder?: InboxAgent;
  claimedAt?: number;
  resolvedAt?: number;
  resolvedBy?: InboxAgent;
  updatedAt: number;
}

/** An internal note: only agents see it (never the customer, never the model). */
export interface InboxNote {
  id: string;
  conversationId: string;
  author: InboxAgent;
  text: string;
  at: number;
}

/** A saved reply, team-wide, inserted in the composer by typing `/` and its shortcut. */
export interface SavedReply {
  id: string;
  /** Lower-case letters, digits and dashes; unique. */
  shortcut: string;
  text: string;
  createdBy: InboxAgent;
  createdAt: number;
}
