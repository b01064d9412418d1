// One reflection cycle: review conversations idle for `daemon.idle_minutes`
// and not reviewed since their last message; store a verdict; with
// `daemon.proactive_followup`, send one follow-up to an unresolved one
// through the proactive actor (dedupKey `followup:<conversationId>`).
//
// Crash safety: the verdict and the decision to follow up are written in one
// transaction (`followupPending`); the follow-up is sent after and then
// cleared. A crash in between retries the send next cycle, and the dedup key
// guarantees it is delivered at most once.
import { z } from 'zod';
import type { ConversationRecord } from '../conversations/host.ts';
import type { HistoryRepo } from '../conversations/history.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { Services } from '../services.ts';
import type { CycleResult } from '../../machines/daemon.ts';
import { REFLECTION_PROMPT, renderTranscript } from './transcript.ts';

export const VerdictSchema = z.object({
  verdict: z.enum(['resolved', 'unresolved', 'unclear']),
  summary: z.string().max(2000).default(''),
  followup: z.string().min(1).max(1000).optional(),
});
export type Verdict = z.infer<typeof VerdictSchema>;

export const DEFAULT_FOLLOWUP = "Hi! Following up on our last conversation — it looks like we didn't fully sort out your request. Reply here and we'll pick it up.";

/** Parses the LLM's answer; anything that isn't the JSON verdict is `unclear`. */
export function parseVerdict(text: string | null): Verdict {
  if (!text) return { verdict: 'unclear', summary: 'empty answer' };
  const candidate = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  try {
    const parsed = VerdictSchema.safeParse(JSON.parse(candidate));
    if (parsed.success) return parsed.data;
  } catch {
    /* prose */
  }
  return { verdict: 'unclear', summary: text.slice(0, 200) };
}

export interface ReflectionDeps {
  services: Services;
  llm: LlmProvider;
  history: HistoryRepo;
  sendFollowup: (req: { customerExternalId: string; channel: 'web' | 'whatsapp'; content: string; dedupKey: string }) => Promise<{ accepted: boolean; reason?: string; messageId?: string }>;
}

export function createReflectionCycle(deps: ReflectionDeps) {
  const { services, llm, history } = deps;
  const { store, clock, config, telemetry, logger } = services;
  const records = store.table<ConversationRecord>('conversations');

  const eligible = (r: ConversationRecord, now: number) =>
    !r.busy &&
    r.lastMessageAt !== undefined &&
    r.lastMessageAt <= now - config.daemon.idle_minutes * 60_000 &&
    (r.reviewedAt === undefined || r.reviewedAt < r.lastMessageAt);

  const review = async (r: ConversationRecord): Promise<boolean> => {
    const transcript = renderTranscript(history.recent(r.conversationId, 50));
    const turnId = `${r.conversationId}:reflection:${r.lastMessageAt}`;
    let verdict: Verdict;
    try {
      const res = await llm.complete({
        messages: [
          { role: 'system', content: REFLECTION_PROMPT },
          { role: 'user', content: transcript },
        ],
        tools: [],
        purpose: 'reflection',
        responseFormat: 'json',
      });
      telemetry.turnCall({
        turnId, conversationId: r.conversationId, customerId: r.customerId, sequence: 1, provider: res.provider, model: res.model,
        purpose: 'reflection', durationMs: res.durationMs, promptTokens: res.usage.promptTokens, completionTokens: res.usage.completionTokens, toolCalls: [], ok: true,
      });
      verdict = parseVerdict(res.text);
    } catch (err) {
      telemetry.turnCall({
        turnId, conversationId: r.conversationId, customerId: r.customerId, sequence: 1, provider: llm.name, model: llm.model,
        purpose: 'reflection', durationMs: 0, promptTokens: 0, completionTokens: 0, toolCalls: [], ok: false, error: (err as Error).message,
      });
      throw err;
    }
    const now = clock.now();
    const wantsFollowup = verdict.verdict === 'unresolved' && config.daemon.proactive_followup;
    const stored = await store.transaction(() => {
      const current = records.get(r.conversationId);
      if (!current || current.lastMessageAt !== r.lastMessageAt || !eligible(current, now)) return false;
      records.putInTx(r.conversationId, {
        ...current,
        reviewedAt: now,
        reflection: { verdict: verdict.verdict, summary: verdict.summary, at: now },
        ...(wantsFollowup ? { followupPending: { content: verdict.followup ?? DEFAULT_FOLLOWUP, decidedAt: now } } : {}),
      });
      return true;
    });
    if (stored) {
      telemetry.event({
        type: 'daemon.verdict', conversationId: r.conversationId, customerId: r.customerId, customerExternalId: r.externalId, channel: r.channel,
        data: { verdict: verdict.verdict, summary: verdict.summary, followup: wantsFollowup },
      });
    }
    return stored;
  };

  const sendPending = async (r: ConversationRecord): Promise<boolean> => {
    if (!r.followupPending || !r.externalId) return false;
    const result = await deps.sendFollowup({
      customerExternalId: r.externalId,
      channel: r.channel,
      content: r.followupPending.content,
      dedupKey: `followup:${r.conversationId}`,
    });
    await store.transaction(() => {
      const current = records.get(r.conversationId);
      if (current?.followupPending) {
        const { followupPending: _, ...rest } = current;
        records.putInTx(r.conversationId, rest as ConversationRecord);
      }
    });
    telemetry.event({
      type: 'daemon.followup', conversationId: r.conversationId, customerId: r.customerId, customerExternalId: r.externalId, channel: r.channel,
      data: { accepted: result.accepted, reason: result.reason, messageId: result.messageId },
    });
    return result.accepted;
  };

  return async function runCycle(): Promise<CycleResult> {
    const now = clock.now();
    const pending: ConversationRecord[] = [];
    const candidates: ConversationRecord[] = [];
    for (const { value } of records.range()) {
      if (value.followupPending) pending.push(value);
      else if (candidates.length < config.daemon.max_per_cycle && eligible(value, now)) candidates.push(value);
    }
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
      const current = records.get(r.conversationId);
      if (current?.followupPending) pending.push(current);
    }
    for (const r of pending) {
      try {
        if (await sendPending(r)) followups++;
      } catch (err) {
        logger.warn({ err, conversationId: r.conversationId }, 'follow-up failed');
      }
    }
    return { reviewed, followups };
  };
}
