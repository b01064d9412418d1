// Pure: which outputs may wait for the turn's next write instead of a commit of their own, when the operator chose so
// (`conversation.defer_read_call_records`, off by default). A read call's `tool` records (invoked, result, failed) are
// not shown to the customer and change nothing outside Parley: they go with the reply's write (or the next message's, a
// handoff's…), or on their own after QUIET_OUTPUT_WAIT_MS when nothing comes sooner. A turn then commits twice (the
// customer's message, the reply) instead of four times. What the wait costs: a crash inside it resumes the turn from
// the customer's message, which asks the model again, so the read call may run again under a new invocationId (by
// default a call whose start is stored is retried with the same one: RELIABILITY.md). A call that needs the customer's
// confirmation (a write) is never deferred.
import type { ConversationContext, Turn } from '../../machines/conversation.ts';
import type { Pending } from './types.ts';

/** How long a deferred output may wait for the next write: live views (events, the dashboard) see it this late at most. */
export const QUIET_OUTPUT_WAIT_MS = 1000;

/**
 * Whether the call `callId` of `turn` asks nobody first, as the turn's transcript says (the model's step that asked for
 * it is written there with the step's calls; not found: not known to).
 */
function asksNobody(turn: Turn, callId: string): boolean {
  for (let i = turn.transcript.length - 1; i >= 0; i--) {
    const entry = turn.transcript[i];
    if (entry.role !== 'assistant') continue;
    const call = entry.toolCalls.find((c) => c.id === callId);
    if (call) return !call.requiresConfirmation;
  }
  return false;
}

/** A record of a read call of the running turn (no confirmation, no receipt): it may wait for the next write. */
export function mayWait(o: Pending['o'], context: Pick<ConversationContext, 'turn'>): boolean {
  if (o.type !== 'tool' || context.turn?.turnId !== o.turnId) return false;
  if ('confirmationId' in o && o.confirmationId !== undefined) return false;
  return asksNobody(context.turn, o.callId);
}

/** Whether everything waiting to be written may wait (nothing waiting: no, a state change is written as before). */
export const allMayWait = (pending: readonly Pending[], context: Pick<ConversationContext, 'turn'>): boolean =>
  pending.length > 0 && pending.every((e) => mayWait(e.o, context));
