// Pure: a turn's tool calls — the call being worked on, the text the LLM gets for its outcome, the transcript entry
// it adds (a result, or a declined/expired confirmation) and the `tool` outputs around it.
import type { ConversationContext, ConversationOutput, InvokeOutcome, ToolCall, Turn, TurnEntry } from './types.ts';

const MAX_TOOL_CONTENT = 8000;

export const DECLINED_CONTENT = 'The customer declined this action; it was not carried out.';
export const EXPIRED_CONTENT = 'The customer did not confirm in time; the action was cancelled and not carried out.';

export const UNREADABLE_RESULT = 'Error (unreadable_result): the function answered with data that could not be read (too deeply nested or not JSON).';

/** The text the LLM gets for a call's outcome. Never throws: a hostile result must not take the conversation down. */
export function toolContent(outcome: InvokeOutcome): string {
  let text: string;
  try {
    text = outcome.ok
      ? typeof outcome.data === 'string'
        ? outcome.data
        : (JSON.stringify(outcome.data ?? null) ?? 'null')
      : `Error${outcome.error.code ? ` (${outcome.error.code})` : ''}: ${outcome.error.message}`;
  } catch {
    return UNREADABLE_RESULT;
  }
  return text.length > MAX_TOOL_CONTENT ? `${text.slice(0, MAX_TOOL_CONTENT)}…` : text;
}

export const currentCall = (c: ConversationContext): ToolCall => c.turn!.calls[c.turn!.callIndex];
export const invocationIdFor = (turn: Turn, call: ToolCall) => `${turn.turnId}:${turn.step}:${call.id}`;

/** What the customer (or the deadline) decided about the pending confirmation of the current call. */
export function confirmationDecided(context: ConversationContext, outcome: 'approved' | 'denied' | 'expired'): ConversationOutput {
  return { type: 'confirmation', id: context.turn!.pending!.confirmationId, turnId: context.turn!.turnId, name: currentCall(context).name, outcome };
}

export function toolInvoked(context: ConversationContext): ConversationOutput {
  const call = currentCall(context);
  return { type: 'tool', turnId: context.turn!.turnId, callId: call.id, name: call.name, phase: 'invoked', args: call.args };
}

export const invokeError = (error: unknown): InvokeOutcome => ({ ok: false, error: { message: String((error as Error)?.message ?? error) } });

/** After recordResult: the call's tool entry is the last one in the transcript. */
export function toolFinished(context: ConversationContext, outcome: InvokeOutcome, at?: number): ConversationOutput {
  const turn = context.turn!;
  const entry = turn.transcript[turn.transcript.length - 1] as Extract<TurnEntry, { role: 'tool' }>;
  const call = turn.calls[turn.callIndex - 1];
  return {
    type: 'tool',
    turnId: turn.turnId,
    callId: entry.callId,
    name: entry.name,
    phase: entry.ok ? 'result' : 'failed',
    content: entry.content,
    ...(at !== undefined && turn.callStartedAt !== undefined ? { durationMs: Math.max(0, at - turn.callStartedAt) } : {}),
    ...(entry.ok ? {} : { error: outcome.ok ? 'unreadable result' : outcome.error.message }),
    // A confirmed call: its receipt goes where the customer approved it (never a bare "approved" next to a failure).
    ...(call?.requiresConfirmation && outcome.receipt ? { confirmationId: invocationIdFor(turn, call), receipt: outcome.receipt } : {}),
  };
}

function toolEntry(call: ToolCall, outcome: InvokeOutcome): TurnEntry {
  const content = toolContent(outcome);
  return { role: 'tool', callId: call.id, name: call.name, ok: outcome.ok && content !== UNREADABLE_RESULT, content };
}

export function recordResult(context: ConversationContext, outcome: InvokeOutcome, at = context.lastAt): Partial<ConversationContext> {
  const turn = context.turn!;
  const call = turn.calls[turn.callIndex];
  return {
    lastAt: Math.max(context.lastAt, at),
    turn: Object.assign({}, turn, { callIndex: turn.callIndex + 1, transcript: [...turn.transcript, toolEntry(call, outcome)] }),
  };
}

export function skipCall(context: ConversationContext, content: string): Turn {
  const turn = context.turn!;
  const call = turn.calls[turn.callIndex];
  return Object.assign({}, turn, {
    pending: undefined,
    callIndex: turn.callIndex + 1,
    transcript: [...turn.transcript, { role: 'tool', callId: call.id, name: call.name, ok: false, content }],
  });
}
