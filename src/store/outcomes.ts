// Conversation outcomes as the store keeps them (issue 39): one record per conversation, the outcome of its current
// episode (docs/outcomes.md defines each), with the times the dashboard measures and the customer's rating. Both
// engines serve `OutcomeStore` (test/store/outcomes.test.ts); it joins a transaction's repositories, so an outcome is
// written in the same transaction as the conversation's messages that decide it.
import { HANDOFF_REASONS, OUTCOMES } from '../../sdk/src/agent-api.ts';
import type { Channel } from './model.ts';

export { HANDOFF_REASONS, OUTCOMES };
export type Outcome = (typeof OUTCOMES)[number];
/** `open`: the episode has no outcome yet. */
export type OutcomeStatus = 'open' | Outcome;

export type HandoffReason = (typeof HANDOFF_REASONS)[number];

/** A rating the customer gave (CSAT, 1–5) or a model's estimate of the experience (labelled estimated). */
export interface Rating {
  score: number;
  /** Where it came from when it may arrive twice (a WhatsApp message id): the same id is stored once. */
  id?: string;
  comment?: string;
  at: number;
}

export interface ConversationOutcome {
  conversationId: string;
  customerId: string;
  externalId?: string;
  channel: Channel;
  status: OutcomeStatus;
  /** Handed over: the reason category, who set it (`model`/`api`: with the handoff; `agent`: changed since). */
  reason?: HandoffReason;
  reasonBy?: 'model' | 'api' | 'agent';
  /** The episode's first customer message. */
  startedAt: number;
  /** The first answer (the assistant's or a person's) after `startedAt`. */
  firstResponseAt?: number;
  /** When the outcome was decided (unset while open). */
  endedAt?: number;
  /** The last message of the episode, anyone's. */
  lastAt: number;
  /** Who the conversation waits for: `reply` (a customer message unanswered), `customer` (asked a question or a confirmation). */
  waiting?: 'reply' | 'customer';
  /** The customer's last answer to "Did that answer your question?" in this episode. */
  answered?: 'yes' | 'no';
  /** The last reply was an apology for a failure. */
  failed?: boolean;
  /** A person has the conversation now. */
  withHuman?: boolean;
  /** When an open episode is decided (its last message plus `outcomes.assume_after_hours`). */
  decideAt?: number;
  /** Times a resolved outcome was undone by the customer writing again within the reopen window. */
  reopens: number;
  csat?: Rating;
  /** The model's estimate of the experience (1–5, `comment` its one-line reason). */
  experience?: Rating;
  updatedAt: number;
}

export interface OutcomeFilter {
  /** `startedAt` from and until, inclusive (ms). */
  since?: number;
  until?: number;
  channel?: Channel;
  status?: OutcomeStatus;
  customerId?: string;
  limit: number;
}

export interface OutcomeStore {
  get(conversationId: string): Promise<ConversationOutcome | undefined>;
  /** Writes the record (replacing the conversation's previous one) and indexes its `decideAt`. */
  put(outcome: ConversationOutcome): Promise<void>;
  /** Conversation ids whose `decideAt` is at or before `now`, earliest first. */
  due(now: number, limit: number): Promise<string[]>;
  /** The earliest `decideAt` stored (undefined: none). */
  nextDue(): Promise<number | undefined>;
  /** Records matching the filter, the latest `startedAt` first (ties: higher id first). */
  list(f: OutcomeFilter): Promise<ConversationOutcome[]>;
}
