// The conversation machine's setup: its types, the injected actors (placeholders the runtime replaces with
// `.provide`), and the named actions, guards and delays its states use. The states are in the files beside it.
import { enqueueActions, fromPromise, setup } from 'xstate';
import { humanDelay, newHumanMode } from '../human.ts';
import { authorOf, requestedOutput } from './handoff.ts';
import { currentCall } from './tool-results.ts';
import { gatherDue, isKnownMessage } from './turn.ts';
import type {
  ConversationContext,
  ConversationEvent,
  ConversationInput,
  ConversationOutput,
  InvokeOutcome,
  InvokeToolInput,
  LlmStepInput,
  LlmStepOutput,
  Timed,
} from './types.ts';

export const conversationSetup = setup({
  types: {
    input: {} as ConversationInput,
    context: {} as ConversationContext,
    events: {} as ConversationEvent,
    emitted: {} as ConversationOutput,
  },
  actors: {
    llm: fromPromise<Timed<LlmStepOutput>, LlmStepInput>(async () => {
      throw new Error('llm actor not provided');
    }),
    invokeTool: fromPromise<Timed<InvokeOutcome>, InvokeToolInput>(async () => {
      throw new Error('invokeTool actor not provided');
    }),
  },
  actions: {
    /** Messages that waited for the assistant when a person took over go to the person instead. */
    forwardQueued: enqueueActions(({ context, enqueue }) => {
      for (const m of context.queue) enqueue.emit({ type: 'forward', messageId: m.messageId, text: m.text });
    }),
    /**
     * A handoff while a confirmation waits (or is about to be asked): the confirmation is cancelled (none is asked),
     * the turn ends, a person has it.
     */
    cancelForHandoff: enqueueActions(({ context, event, enqueue }) => {
      const turn = context.turn!;
      const call = turn.calls[turn.callIndex];
      const at = event.type === 'handoff.request' ? Math.max(context.lastAt, event.at) : context.lastAt;
      const asked = event.type === 'handoff.request' ? event : context.handoffAsked;
      const reason = asked?.reason;
      const human = newHumanMode(at, 'api', reason, asked?.agentId);
      if (turn.pending)
        enqueue.emit({ type: 'confirmation', id: turn.pending.confirmationId, turnId: turn.turnId, name: call.name, outcome: 'cancelled', reason: 'handoff' });
      enqueue.emit(requestedOutput(human));
      enqueue.emit({ type: 'turn', turnId: turn.turnId, phase: 'ended', messageId: turn.messageId });
      for (const m of context.queue) enqueue.emit({ type: 'forward', messageId: m.messageId, text: m.text });
      enqueue.assign({ lastAt: at, human, handoffAsked: undefined, turn: undefined, queue: [] });
    }),
    /** "Alex joined": an agent's first message, or another agent's than the last one's. */
    agentJoined: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'agent.message' || context.human?.agent?.name === event.author.name) return;
      const first = context.human !== undefined && context.human.agent === undefined;
      enqueue.emit(
        Object.assign(
          { type: 'handoff' as const, id: `j:${event.id}`, phase: 'joined' as const, agent: authorOf(event.author) },
          first ? { waitedMs: Math.max(0, event.at - context.human!.since) } : {},
        ),
      );
    }),
  },
  guards: {
    isNewMessage: ({ context, event }) => event.type === 'customer.message' && !isKnownMessage(context, event.messageId),
    hasQueued: ({ context }) => context.queue.length > 0,
    matchesPending: ({ context, event }) => event.type === 'customer.confirm' && context.turn?.pending?.confirmationId === event.confirmationId,
    approved: ({ event }) => event.type === 'customer.confirm' && event.approve,
    callsDone: ({ context }) => context.turn!.callIndex >= context.turn!.calls.length,
    needsConfirmation: ({ context }) => currentCall(context).requiresConfirmation,
    handoffAsked: ({ context }) => context.handoffAsked !== undefined,
    gathering: ({ context }) => (gatherDue(context) ?? 0) > context.lastAt,
    isNewAgentMessage: ({ context, event }) => event.type === 'agent.message' && !(context.agentIds ?? []).includes(event.id),
  },
  delays: {
    confirmationLeft: ({ context }) => Math.max(0, (context.turn?.pending?.deadline ?? context.lastAt) - context.lastAt),
    gatherLeft: ({ context }) => Math.max(0, (gatherDue(context) ?? context.lastAt) - context.lastAt),
    humanLeft: ({ context }) => humanDelay(context.human, context, context.lastAt),
  },
});
