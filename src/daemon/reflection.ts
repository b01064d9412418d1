// One reflection cycle: review conversations idle for `daemon.idle_minutes`
// and not reviewed since their last message (`lastMessageAt`, customer or
// assistant); store a verdict; with `daemon.proactive_followup`, send one
// follow-up to an unresolved one through the proactive actor (dedupKey
// `followup:<conversationId>`).
//
// Crash safety:
// - Before the LLM call the daemon records an attempt for this conversation
//   state (`reviewAttempt`, keyed by lastMessageAt). A crash after the call
//   repeats the call next cycle, at most MAX_REVIEW_ATTEMPTS times; the verdict
//   is stored only if none is stored yet, so there is only ever one verdict.
// - The verdict and the decision to follow up (`followupPending`) are written in
//   one transaction; the follow-up is sent after. A crash before the send
//   retries it next cycle; a crash after it retries too, and the dedup key
//   blocks the second send, so at most one follow-up is ever accepted.
// - Before sending, one transaction re-reads the record and drops the follow-up
//   if the customer wrote again (or anything was said) after the decision.
import { z } from 'zod';
import { MAX_REVIEW_ATTEMPTS, type ConversationRecord } from '../store/model.ts';
import { BLOCK_REASONS } from '../../machines/proactive.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { Services } from '../services.ts';
import type { CycleResult } from '../../machines/daemon.ts';
import { REFLECTION_PROMPT, renderTranscript } from './transcript.ts';
import type { ObservedLlmRequest } from '../llm/resilient.ts';
import { answeredCall, failedAttemptCall, failedCall } from '../llm/turn-call.ts';

const SUMMARY_MAX = 2000;
const FOLLOWUP_MAX = 1000;

/** Lenient on form (case, null/empty follow-up, over-long text), strict on meaning (the verdict must be one of three). */
export const VerdictSchema = z.object({
  verdict: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(['resolved', 'unresolved', 'unclear'])),
  summary: z.preprocess(
    (v) => (v == null ? '' : v),
    z.string().transform((s) => s.slice(0, SUMMARY_MAX)),
  ),
  followup: z.preprocess(
    (v) => (v == null || (typeof v === 'string' && v.trim() === '') ? undefined : v),
    z
      .string()
      .transform((s) => s.trim().slice(0, FOLLOWUP_MAX))
      .optional(),
  ),
});
export type Verdict = z.infer<typeof VerdictSchema>;

export const DEFAULT_FOLLOWUP =
  "Hi! Following up on our last conversation — it looks like we didn't fully sort out your request. Reply here and we'll pick it up.";

/** The JSON object in the answer: the whole text, a fenced block, or the outermost braces in prose. */
function jsonCandidates(text: string): string[] {
  const trimmed = text.trim();
  const out = [trimmed];
  const fenced = trimmed.match(/```(?:json)?\s*([\s\S]*?)```/i);
  if (fenced) out.push(fenced[1].trim());
  const first = trimmed.indexOf('{');
  const last = trimmed.lastIndexOf('}');
  if (first >= 0 && last > first) out.push(trimmed.slice(first, last + 1));
  return out;
}

/** Parses the LLM's answer; anything that isn't a valid JSON verdict is `unclear`. */
export function parseVerdict(text: string | null): Verdict {
  if (!text || !text.trim()) return { verdict: 'unclear', summary: 'empty answer' };
  for (const candidate of jsonCandidates(text)) {
    let json: unknown;
    try {
      json = JSON.parse(candidate);
    } catch {
      continue;
    }
    const parsed = VerdictSchema.safeParse(json);
    if (parsed.success) return parsed.data;
  }
  return { verdict: 'unclear', summary: text.trim().slice(0, 200) };
}

export { MAX_REVIEW_ATTEMPTS } from '../store/model.ts';
export const MAX_FOLLOWUP_ATTEMPTS = 3;

/** The daemon's own bookkeeping is on the conversation record (the host keeps those fields when it writes). */
export type ReviewedRecord = ConversationRecord;

const GUARDRAIL_REASONS = new Set<string>(Object.values(BLOCK_REASONS));

export interface ReflectionDeps {
  services: Services;
  llm: LlmProvider;
  /** The proactive service's send: resolves accepted or blocked (one of seven reasons); rejects on an internal failure. */
  sendFollowup: (req: {
    customerExternalId: string;
    channel: 'web' | 'whatsapp';
    content: string;
    dedupKey: string;
  }) => Promise<{ accepted: boolean; reason?: string; messageId?: string }>;
}

export function createReflectionCycle(deps: ReflectionDeps) {
  const { services, llm } = deps;
  const { store, clock, config, telemetry, logger } = services;
  const attemptsFor = (r: ReviewedRecord) => (r.reviewAttempt && r.reviewAttempt.lastMessageAt === r.lastMessageAt ? r.reviewAttempt.attempts : 0);

  const needsReview = (r: ReviewedRecord) =>
    r.lastMessageAt !== undefined && (r.reviewedAt === undefined || r.reviewedAt < r.lastMessageAt) && attemptsFor(r) < MAX_REVIEW_ATTEMPTS;

  const eligible = (r: ReviewedRecord, now: number) =>
    !r.busy &&
    r.lastMessageAt !== undefined &&
    r.lastMessageAt <= now - config.daemon.idle_minutes * 60_000 &&
    (r.reviewedAt === undefined || r.reviewedAt < r.lastMessageAt) &&
    attemptsFor(r) < MAX_REVIEW_ATTEMPTS;

  const event = (r: ReviewedRecord, type: string, data: Record<string, unknown>) =>
    telemetry.event({ type, conversationId: r.conversationId, customerId: r.customerId, customerExternalId: r.externalId, channel: r.channel, data });

  /** Records an attempt before the LLM call; returns its number, or 0 when the record is no longer eligible. */
  const claim = (r: ReviewedRecord, now: number) =>
    store.transaction(async ({ conversations }) => {
      const current = await conversations.lock(r.conversationId);
      if (!current || current.lastMessageAt !== r.lastMessageAt || !eligible(current, now)) return 0;
      const attempts = attemptsFor(current) + 1;
      await conversations.put(Object.assign({}, current, { reviewAttempt: { lastMessageAt: current.lastMessageAt!, attempts, at: now } }));
      return attempts;
    });

  const review = async (r: ReviewedRecord): Promise<boolean> => {
    const attempt = await claim(r, clock.now());
    if (attempt === 0) return false;
    const transcript = renderTranscript(await store.history.recent(r.conversationId, 50));
    const turnId = `${r.conversationId}:reflection:${r.lastMessageAt}`;
    let verdict: Verdict;
    const base = { turnId, conversationId: r.conversationId, customerId: r.customerId, sequence: attempt, purpose: 'reflection' as const };
    // Each failed attempt (a retry or the fallback follows) is its own turn-call, as for chat turns.
    let failedAttempts = 0;
    const request: ObservedLlmRequest = {
      messages: [
        { role: 'system', content: REFLECTION_PROMPT },
        { role: 'user', content: transcript },
      ],
      tools: [],
      purpose: 'reflection',
      responseFormat: 'json',
      onAttemptFailed: (a) => {
        failedAttempts++;
        telemetry.turnCall(Object.assign(failedAttemptCall(a), base));
      },
    };
    try {
      const res = await llm.complete(request);
      telemetry.turnCall(Object.assign(answeredCall(res, []), base));
      verdict = parseVerdict(res.text);
    } catch (err) {
      if (failedAttempts === 0) {
        telemetry.turnCall(Object.assign(failedCall(llm, 0, err), base));
      }
      if (attempt >= MAX_REVIEW_ATTEMPTS) {
        logger.warn({ err, conversationId: r.conversationId, attempts: attempt }, 'reflection gave up');
        event(r, 'daemon.gave_up', { what: 'review', attempts: attempt, error: (err as Error).message });
      }
      throw err;
    }
    const now = clock.now();
    const wantsFollowup = verdict.verdict === 'unresolved' && config.daemon.proactive_followup;
    const stored = await store.transaction(async ({ conversations }) => {
      const current = await conversations.lock(r.conversationId);
      if (!current || current.lastMessageAt !== r.lastMessageAt) return false;
      if (current.reviewedAt !== undefined && current.reviewedAt >= current.lastMessageAt!) return false; // already has its verdict
      const { reviewAttempt: _, ...rest } = current;
      await conversations.put(
        Object.assign(
          {},
          rest,
          { reviewedAt: now, reflection: { verdict: verdict.verdict, summary: verdict.summary, at: now } },
          wantsFollowup ? { followupPending: { content: verdict.followup ?? DEFAULT_FOLLOWUP, decidedAt: now } } : {},
        ),
      );
      return true;
    });
    if (stored) event(r, 'daemon.verdict', { verdict: verdict.verdict, summary: verdict.summary, followup: wantsFollowup });
    return stored;
  };

  /** The record without its pending follow-up. */
  const withoutPending = (r: ReviewedRecord): ReviewedRecord => {
    const { followupPending: _, ...rest } = r;
    return rest as ReviewedRecord;
  };

  /** Check-and-clear in one transaction: what to send, or why the pending follow-up was dropped. */
  const takeForSending = (conversationId: string) =>
    store.transaction(
      async ({
        conversations,
      }): Promise<
        { send: NonNullable<ReviewedRecord['followupPending']>; record: ReviewedRecord } | { dropped: string; record: ReviewedRecord } | undefined
      > => {
        const current = await conversations.lock(conversationId);
        const pending = current?.followupPending;
        if (!current || !pending) return undefined;
        let dropped: string | undefined;
        if (!current.externalId) dropped = 'no customer externalId';
        else if (current.reviewedAt === undefined || (current.lastCustomerMessageAt ?? 0) > pending.decidedAt) dropped = 'the customer wrote again';
        else if ((current.lastMessageAt ?? 0) > pending.decidedAt) dropped = 'the conversation moved on';
        if (dropped === undefined) return { send: pending, record: current };
        await conversations.put(withoutPending(current));
        return { dropped, record: current };
      },
    );

  const sendPending = async (conversationId: string): Promise<boolean> => {
    const taken = await takeForSending(conversationId);
    if (!taken) return false;
    if ('dropped' in taken) {
      event(taken.record, 'daemon.followup', { accepted: false, dropped: taken.dropped });
      return false;
    }
    const r = taken.record;
    let result: { accepted: boolean; reason?: string; messageId?: string } | undefined;
    let error: string | undefined;
    try {
      result = await deps.sendFollowup({
        customerExternalId: r.externalId!,
        channel: r.channel,
        content: taken.send.content,
        dedupKey: `followup:${r.conversationId}`,
      });
    } catch (err) {
      error = (err as Error).message;
    }
    // Done when accepted or blocked by a guardrail; any other failure keeps it for the next cycle, up to a bound.
    const settled = result !== undefined && (result.accepted || GUARDRAIL_REASONS.has(result.reason ?? ''));
    const attempts = (taken.send.attempts ?? 0) + 1;
    const gaveUp = !settled && attempts >= MAX_FOLLOWUP_ATTEMPTS;
    await store.transaction(async ({ conversations }) => {
      const current = await conversations.lock(conversationId);
      if (current?.followupPending?.decidedAt !== taken.send.decidedAt) return;
      await conversations.put(
        settled || gaveUp ? withoutPending(current) : Object.assign({}, current, { followupPending: Object.assign({}, current.followupPending, { attempts }) }),
      );
    });
    if (gaveUp) {
      logger.warn({ conversationId, attempts, reason: result?.reason, error }, 'follow-up gave up');
      event(r, 'daemon.gave_up', { what: 'followup', attempts, reason: result?.reason, error });
    }
    event(r, 'daemon.followup', { accepted: result?.accepted === true, reason: result?.reason, messageId: result?.messageId, error, attempts });
    return result?.accepted === true;
  };

  /** The store's work list (engines index `reviewDueAt` on every write), re-checked against each record. */
  const select = async (now: number) => {
    const candidates: ReviewedRecord[] = [];
    const due = await store.conversations.dueForReview(now - config.daemon.idle_minutes * 60_000, config.daemon.max_per_cycle * 4);
    for (const entry of due) {
      if (candidates.length >= config.daemon.max_per_cycle) break;
      const r = await store.conversations.get(entry.conversationId);
      if (r && r.lastMessageAt === entry.lastMessageAt && needsReview(r) && !r.followupPending && eligible(r, now)) candidates.push(r);
    }
    return { pending: await store.conversations.withPendingFollowup(config.daemon.max_per_cycle * 4), candidates };
  };

  return async function runCycle(): Promise<CycleResult> {
    const now = clock.now();
    const { pending, candidates } = await select(now);
    let reviewed = 0;
    let followups = 0;
    for (const r of candidates) {
      try {
        if (await review(r)) reviewed++;
      } catch (err) {
        logger.warn({ err, conversationId: r.conversationId }, 'reflection failed');
      }
    }
    for (const r of candidates) {
      if ((await store.conversations.get(r.conversationId))?.followupPending && !pending.includes(r.conversationId)) pending.push(r.conversationId);
    }
    for (const id of pending) {
      try {
        if (await sendPending(id)) followups++;
      } catch (err) {
        logger.warn({ err, conversationId: id }, 'follow-up failed');
      }
    }
    return { reviewed, followups };
  };
}
