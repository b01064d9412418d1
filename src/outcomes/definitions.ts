// The outcome of a conversation, as docs/outcomes.md defines it: pure functions over the stored record. `applyFact`
// folds in what happened (a customer message, a reply, a handoff, an answer to "Did that answer your question?");
// `decide` settles an open episode once nothing happened for `assume_after_hours`. Each returns the changes worth an
// event (`conversation.outcome`): an outcome decided, or a resolution undone (a reopen).
import { APOLOGY_LLM_FAILED, APOLOGY_TOO_MANY_STEPS } from '../../machines/conversation.ts';
import { NO_ANSWER } from '../conversations/llm-step.ts';
import { dontKnowReply } from '../knowledge/citations.ts';
import type { ConversationMeta } from '../store/model.ts';
import { HANDOFF_REASONS, type ConversationOutcome, type HandoffReason, type Outcome } from '../store/outcomes.ts';

export interface OutcomeSettings {
  /** An open episode is decided this long after its last message. */
  assumeAfterMs: number;
  /** A resolved outcome is undone when the customer writes again within this long of it. */
  reopenMs: number;
}

export type OutcomeFact =
  | { kind: 'customer'; at: number; text: string }
  /** `unanswered`: an apology or Parley's "I don't know" instead of an answer. */
  | { kind: 'reply'; at: number; text: string; unanswered?: true }
  | { kind: 'agent'; at: number }
  | { kind: 'confirm'; at: number }
  | { kind: 'confirmation'; at: number; outcome: 'approved' | 'denied' | 'expired' | 'cancelled' }
  | { kind: 'handoff'; at: number; source: 'model' | 'api'; reason?: string }
  | { kind: 'released'; at: number }
  | { kind: 'answer'; at: number; yes: boolean };

/** What an event reports: an outcome decided, or a resolved one undone. */
export interface OutcomeChange {
  outcome: Outcome | 'reopened';
  at: number;
  record: ConversationOutcome;
}

// Replies that mean the customer was not helped carry `unanswered`; replies stored before they did are known by text.
const FAILURES = new Set([APOLOGY_LLM_FAILED, APOLOGY_TOO_MANY_STEPS, NO_ANSWER, dontKnowReply(true), dontKnowReply(false)]);

const DENIES =
  /\b(didn'?t|doesn'?t|did not|does not|not|never|still not|isn'?t|wasn'?t) (help|helpful|work|working|answer|solve|fix|it|right|what)\b|\bstill (broken|failing|doesn'?t|not)\b|\bno,? (it|that) (didn'?t|doesn'?t)\b/i;
const CONFIRMS =
  /\b(thanks|thank you|thx|ty|that (helped|helps|answered|answers|solved|solves|fixed|works|worked|did it)|(it|this) (works|worked)( now)?|(problem|issue) (solved|fixed)|all (sorted|good|set)|got it,? thanks|perfect|great,? thanks|solved)\b/i;

/** The customer's message says their question was answered (thanks, that solved it…), unless it says it was not. */
export const confirmsResolution = (text: string) => !DENIES.test(text) && CONFIRMS.test(text);
/** The customer's message says it did not help. */
export const deniesResolution = (text: string) => DENIES.test(text);

const CLOSERS = /\b(anything else|something else|other questions?|further questions?|else (i|we) can (help|do))\b/i;

/** A reply that asks the customer something (it waits for them), not a closing "anything else?". */
export function asksCustomer(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.endsWith('?')) return false;
  const last = trimmed.split(/(?<=[.!?])\s+/).at(-1) ?? trimmed;
  return !CLOSERS.test(last);
}

const KEYWORDS: [HandoffReason, RegExp][] = [
  [
    'customer_asked',
    /\b(asked|asks|wants|want|requested|request) (for |to (talk|speak) to )?(a |an )?(human|person|agent|operator|someone|representative)\b|customer (asked|wants)/i,
  ],
  ['tool_failure', /\b(tool|function|system|backend|api)\b.*\b(fail|failed|failing|error|down|broken)\b|\b(fail|failed|error)\b/i],
  ['policy', /\b(policy|policies|not allowed|compliance|legal|refund over|exception|approval)\b/i],
  [
    'missing_knowledge',
    /\b(don'?t know|do not know|no (information|answer|article)|missing (knowledge|information)|not (in|covered by) the (docs|knowledge))\b/i,
  ],
  ['unsupported_request', /\b(unsupported|can'?t (do|help)|cannot (do|help)|not supported|out of scope|not able to)\b/i],
];

/**
 * The reason category of a handoff: a category named first (`missing_knowledge`, or `policy: refund over the limit`),
 * else one its words point to, else `other`.
 */
export function categoryOf(reason: string | undefined): HandoffReason {
  const text = (reason ?? '').trim();
  const named = /^([a-z_]+)\b/.exec(text.toLowerCase())?.[1];
  if (named && (HANDOFF_REASONS as readonly string[]).includes(named)) return named as HandoffReason;
  for (const [category, words] of KEYWORDS) if (words.test(text)) return category;
  return 'other';
}

/** Resolved outcomes can be undone by the customer writing again (within the reopen window). */
const isResolved = (s: ConversationOutcome['status']) => s === 'resolved_confirmed' || s === 'resolved_assumed';

function startEpisode(meta: ConversationMeta, at: number): ConversationOutcome {
  const o: ConversationOutcome = {
    conversationId: meta.conversationId,
    customerId: meta.customerId,
    channel: meta.channel,
    status: 'open',
    startedAt: at,
    lastAt: at,
    reopens: 0,
    updatedAt: at,
  };
  if (meta.externalId !== undefined) o.externalId = meta.externalId;
  return o;
}

function settle(r: ConversationOutcome, outcome: Outcome, at: number, changes: OutcomeChange[]): void {
  r.status = outcome;
  r.endedAt = at;
  delete r.decideAt;
  changes.push({ outcome, at, record: r });
}

function onCustomer(
  prev: ConversationOutcome | undefined,
  meta: ConversationMeta,
  f: { at: number; text: string },
  s: OutcomeSettings,
  changes: OutcomeChange[],
) {
  let r: ConversationOutcome;
  if (!prev) r = startEpisode(meta, f.at);
  else if (prev.status === 'open' || (prev.status === 'handed_over' && prev.withHuman)) r = Object.assign({}, prev);
  else if (isResolved(prev.status) && prev.endedAt !== undefined && f.at - prev.endedAt <= s.reopenMs) {
    r = Object.assign({}, prev, { status: 'open', reopens: prev.reopens + 1 });
    delete r.endedAt;
    delete r.answered;
    changes.push({ outcome: 'reopened', at: f.at, record: r });
  } else r = startEpisode(meta, f.at);
  r.lastAt = f.at;
  if (r.status !== 'open') return r;
  r.waiting = 'reply';
  if (r.firstResponseAt !== undefined && deniesResolution(f.text)) r.answered = 'no';
  else if (r.firstResponseAt !== undefined && confirmsResolution(f.text)) {
    r.answered = 'yes';
    delete r.waiting;
    settle(r, 'resolved_confirmed', f.at, changes);
  }
  return r;
}

/** The record after `fact` (a new object; `prev` is not changed), and the changes it makes. */
export function applyFact(
  prev: ConversationOutcome | undefined,
  meta: ConversationMeta,
  fact: OutcomeFact,
  s: OutcomeSettings,
): { record: ConversationOutcome | undefined; changes: OutcomeChange[] } {
  const changes: OutcomeChange[] = [];
  if (fact.kind === 'customer') return finish(onCustomer(prev, meta, fact, s, changes), s, fact.at, changes);
  if (!prev) return { record: undefined, changes };
  const r = Object.assign({}, prev);
  r.lastAt = Math.max(r.lastAt, fact.at);
  switch (fact.kind) {
    case 'reply':
    case 'agent':
      r.firstResponseAt ??= fact.at;
      delete r.waiting;
      r.failed = fact.kind === 'reply' && (fact.unanswered === true || FAILURES.has(fact.text.trim()));
      if (fact.kind === 'reply' && asksCustomer(fact.text)) r.waiting = 'customer';
      break;
    case 'confirm':
      r.waiting = 'customer';
      break;
    case 'confirmation':
      if (fact.outcome !== 'expired') r.waiting = 'reply';
      break;
    case 'handoff':
      r.withHuman = true;
      if (r.status !== 'handed_over') {
        r.reason = categoryOf(fact.reason);
        r.reasonBy = fact.source;
        delete r.waiting;
        settle(r, 'handed_over', fact.at, changes);
      }
      break;
    case 'released':
      delete r.withHuman;
      break;
    case 'answer':
      if (r.status !== 'open') break;
      r.answered = fact.yes ? 'yes' : 'no';
      if (fact.yes) settle(r, 'resolved_confirmed', fact.at, changes);
      break;
  }
  return finish(r, s, fact.at, changes);
}

function finish(r: ConversationOutcome, s: OutcomeSettings, at: number, changes: OutcomeChange[]) {
  r.updatedAt = at;
  if (r.status === 'open') r.decideAt = r.lastAt + s.assumeAfterMs;
  else delete r.decideAt;
  return { record: r, changes };
}

/** The outcome an open episode gets once it has been quiet for `assume_after_hours` (docs/outcomes.md). */
export function outcomeAtRest(r: ConversationOutcome): Outcome {
  if (r.withHuman) return 'handed_over';
  if (r.answered === 'no' || r.failed) return 'unresolved';
  if (r.waiting === 'customer') return 'abandoned';
  if (r.waiting === 'reply' || r.firstResponseAt === undefined) return 'unresolved';
  return 'resolved_assumed';
}

/** Settles an open episode whose time has come (`decideAt <= now`); undefined when there is nothing to decide. */
export function decide(r: ConversationOutcome | undefined, now: number): OutcomeChange | undefined {
  if (!r || r.status !== 'open' || r.decideAt === undefined || r.decideAt > now) return undefined;
  const next = Object.assign({}, r, { updatedAt: now });
  const changes: OutcomeChange[] = [];
  // It ended with its last message (resolution time), and was decided when it came due (not when the sweep ran, which
  // may be late after a restart).
  settle(next, outcomeAtRest(next), r.lastAt, changes);
  return Object.assign(changes[0], { at: r.decideAt });
}
