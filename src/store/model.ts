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
}

/** How a customer is found: the integrator's id, an email (case-insensitive), a WhatsApp phone (E.164) or BSUID. */
export type IdentityKind = 'ext' | 'email' | 'phone' | 'bsuid';

/** The identities a customer record carries, by kind. */
export const IDENTITY_FIELDS: { kind: IdentityKind; field: 'externalId' | 'email' | 'phone' | 'bsuid' }[] = [
  { kind: 'ext', field: 'externalId' },
  { kind: 'email', field: 'email' },
  { kind: 'phone', field: 'phone' },
  { kind: 'bsuid', field: 'bsuid' },
];

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
}

/** A conversation record without its snapshot (lists, the dashboard). */
export type ConversationSummary = Omit<ConversationRecord, 'snapshot'>;

export type MessageRole = 'user' | 'assistant' | 'tool' | 'confirmation';

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
