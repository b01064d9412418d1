// The estimated experience (`outcomes.estimate_experience`, docs/outcomes.md): once a conversation has an outcome, a
// model reads its transcript and scores the customer's experience 1–5 with a one-line reason. It is an estimate and is
// labelled so everywhere; the customer's own rating (CSAT) is kept apart. The call is a turn call of purpose
// `experience` (its tokens and cost count like any other); a failed or unreadable answer stores nothing.
import { z } from 'zod';
import { renderTranscript } from '../daemon/transcript.ts';
import { answeredCall } from '../llm/turn-call.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { Services } from '../services.ts';
import type { ConversationOutcome } from '../store/outcomes.ts';
import type { OutcomeTracker } from './tracker.ts';

export const EXPERIENCE_PROMPT =
  "You read a customer support conversation that has ended. Estimate the customer's experience from 1 (very poor) to " +
  '5 (excellent). Answer with JSON only: {"score": 1-5, "reason": "<one line>"}.';

const REASON_MAX = 200;
const Answer = z.object({ score: z.coerce.number().int().min(1).max(5), reason: z.string().min(1) });
/** A review verdict (the offline model answers reviews this way) read as a score. */
const Verdict = z.object({ verdict: z.enum(['resolved', 'unresolved', 'unclear']), summary: z.string().optional() });
const FROM_VERDICT = { resolved: 4, unclear: 3, unresolved: 2 } as const;

/** The score and reason in the model's answer (a JSON object, alone or in prose), or undefined when there is none. */
export function parseExperience(text: string | null): { score: number; comment: string } | undefined {
  const raw = text?.match(/\{[\s\S]*\}/)?.[0];
  if (!raw) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const a = Answer.safeParse(json);
  if (a.success) return { score: a.data.score, comment: a.data.reason.trim().split('\n')[0].slice(0, REASON_MAX) };
  const v = Verdict.safeParse(json);
  if (v.success) return { score: FROM_VERDICT[v.data.verdict], comment: (v.data.summary || v.data.verdict).split('\n')[0].slice(0, REASON_MAX) };
  return undefined;
}

export function createExperienceEstimator(o: { services: Services; llm: LlmProvider; tracker: OutcomeTracker }) {
  const { store, telemetry, logger } = o.services;
  const log = logger.child({ component: 'outcomes' });
  return async (r: ConversationOutcome): Promise<void> => {
    const transcript = renderTranscript(await store.history.recent(r.conversationId, 50));
    const base = { turnId: `${r.conversationId}:experience:${r.endedAt ?? 0}`, conversationId: r.conversationId, customerId: r.customerId, sequence: 1 };
    try {
      const res = await o.llm.complete({
        messages: [
          { role: 'system', content: EXPERIENCE_PROMPT },
          { role: 'user', content: transcript },
        ],
        tools: [],
        purpose: 'reflection',
        responseFormat: 'json',
      });
      telemetry.turnCall(Object.assign(answeredCall(res, []), base, { purpose: 'experience' as const }));
      const score = parseExperience(res.text);
      if (score) await o.tracker.estimate(r.conversationId, score);
      else log.info({ conversationId: r.conversationId }, 'the experience estimate could not be read');
    } catch (err) {
      log.warn({ err, conversationId: r.conversationId }, 'experience estimate failed');
    }
  };
}
