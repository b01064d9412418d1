// Pure: the queue of customer messages and the turns that answer them — which messages are known, when a burst's
// gathering window closes, the reply's id, and what is recorded when a turn has to be abandoned.
import type { ConversationContext, ConversationOutput, Turn } from './types.ts';

// Only messages not yet durable need the actor's memory: once stored, the durable seen-set (checked
// before the actor and inside the write) is the authority. A few ids cover the commit lag; each one is
// carried in every snapshot write.
export const RECENT_IDS = 8;
/** A burst that keeps going starts its turn at the latest this many windows after its first message. */
export const GATHER_CAP = 4;

export const APOLOGY_LLM_FAILED = "Sorry — I'm having trouble right now. Please try again in a moment.";
export const APOLOGY_TOO_MANY_STEPS = "Sorry, I couldn't complete that request. Please try again or rephrase it.";

/** True when this client message id was already queued or answered (a re-sent message is not answered twice). */
export const isKnownMessage = (context: Pick<ConversationContext, 'recent'>, messageId: string) => context.recent.includes(messageId);

/** The id of a turn's reply: known before the reply is written, so its live text can be streamed under it. */
export const replyIdFor = (turnId: string) => `${turnId}:r`;

/** When the queued burst's gathering window closes (undefined: no window, or nothing queued). */
export function gatherDue(c: Pick<ConversationContext, 'queue' | 'gatherMs'>): number | undefined {
  const ms = c.gatherMs ?? 0;
  if (ms <= 0 || c.queue.length === 0) return undefined;
  return Math.min(c.queue[c.queue.length - 1].at + ms, c.queue[0].at + GATHER_CAP * ms);
}

export const answersOf = (turn: Turn) => turn.messageIds ?? [turn.messageId];

/**
 * What the runtime records when it has to abandon a turn it cannot make durable: the pending
 * confirmation (if any) is cancelled, and the customer gets the apology instead of an answer.
 */
export function abandonedTurnOutputs(turn: Turn | undefined): ConversationOutput[] {
  if (!turn) return [];
  const out: ConversationOutput[] = [];
  const call = turn.calls[turn.callIndex];
  if (turn.pending && call) out.push({ type: 'confirmation', id: turn.pending.confirmationId, turnId: turn.turnId, name: call.name, outcome: 'expired' });
  const answers = answersOf(turn);
  out.push({
    type: 'reply',
    id: replyIdFor(turn.turnId),
    turnId: turn.turnId,
    text: APOLOGY_LLM_FAILED,
    replyTo: turn.messageId,
    ...(answers.length > 1 ? { answers } : {}),
    unanswered: true,
  });
  out.push({ type: 'turn', turnId: turn.turnId, phase: 'ended', messageId: turn.messageId });
  return out;
}
