// A turn's LLM side: `thinking` (one LLM step: a reply, tool calls, or a handoff the model asked for) and
// `replying` (the reply goes out and the turn ends).
import { assign, emit } from 'xstate';
import { newHumanMode } from '../human.ts';
import { withReason } from './handoff.ts';
import { conversationSetup } from './setup.ts';
import { answersOf, APOLOGY_LLM_FAILED, APOLOGY_TOO_MANY_STEPS, replyIdFor } from './turn.ts';
import type { LlmStepOutput, ReplySource, Timed } from './types.ts';

export const thinking = conversationSetup.createStateConfig({
  invoke: {
    src: 'llm',
    input: ({ context }) => ({
      conversationId: context.conversationId,
      customerId: context.customerId,
      turnId: context.turn!.turnId,
      step: context.turn!.step,
      transcript: context.turn!.transcript,
      ...(context.turn!.previousReply ? { previousReply: context.turn!.previousReply } : {}),
    }),
    onDone: [
      {
        guard: ({ event }) => event.output.kind === 'handoff',
        target: 'withHuman',
        actions: [
          assign(({ context, event }) => {
            const at = Math.max(context.lastAt, event.output.at);
            const reason = (event.output as { reason?: string }).reason;
            return { lastAt: at, handoffAsked: undefined, human: newHumanMode(at, 'model', reason) };
          }),
          emit({ type: 'typing', on: false }),
          emit(({ context }) =>
            withReason(
              { type: 'handoff', id: `h:${context.human!.since}`, phase: 'requested', source: 'model', turnId: context.turn!.turnId } as const,
              context.human!.reason,
            ),
          ),
          emit(({ context }) => ({ type: 'turn', turnId: context.turn!.turnId, phase: 'ended', messageId: context.turn!.messageId })),
          'forwardQueued',
          assign({ turn: undefined, queue: [] }),
        ],
      },
      {
        guard: ({ event }) => event.output.kind === 'reply',
        target: 'replying',
        actions: assign(({ context, event }) => ({
          lastAt: event.output.at,
          turn: Object.assign({}, context.turn!, {
            replyText: (event.output as { text: string }).text,
            replySources: (event.output as { sources?: ReplySource[] }).sources,
            replyUnanswered: (event.output as { unanswered?: true }).unanswered,
          }),
        })),
      },
      {
        // At most maxToolSteps LLM steps per turn: the last one may only answer.
        guard: ({ context }) => context.turn!.step >= context.maxToolSteps,
        target: 'replying',
        actions: assign(({ context, event }) => ({
          lastAt: event.output.at,
          turn: Object.assign({}, context.turn!, { replyText: APOLOGY_TOO_MANY_STEPS, replyUnanswered: true as const }),
        })),
      },
      {
        target: 'nextCall',
        // lastAt becomes the time the LLM answered: a confirmation asked now gets its full timeout.
        actions: assign(({ context, event }) => {
          const out = event.output as Timed<Extract<LlmStepOutput, { kind: 'tools' }>>;
          return {
            lastAt: out.at,
            turn: Object.assign({}, context.turn!, {
              calls: out.calls,
              callIndex: 0,
              transcript: [...context.turn!.transcript, { role: 'assistant' as const, text: out.text, toolCalls: out.calls }],
            }),
          };
        }),
      },
    ],
    onError: {
      target: 'replying',
      actions: assign(({ context }) => ({ turn: Object.assign({}, context.turn!, { replyText: APOLOGY_LLM_FAILED, replyUnanswered: true as const }) })),
    },
  },
});

export const replying = conversationSetup.createStateConfig({
  always: {
    target: 'idle',
    actions: [
      emit(({ context }) => ({
        type: 'reply',
        id: replyIdFor(context.turn!.turnId),
        turnId: context.turn!.turnId,
        text: context.turn!.replyText ?? '',
        replyTo: context.turn!.messageId,
        ...(answersOf(context.turn!).length > 1 ? { answers: answersOf(context.turn!) } : {}),
        ...(context.turn!.replySources?.length ? { sources: context.turn!.replySources } : {}),
        ...(context.turn!.replyUnanswered ? { unanswered: true as const } : {}),
      })),
      emit({ type: 'typing', on: false }),
      emit(({ context }) => ({ type: 'turn', turnId: context.turn!.turnId, phase: 'ended', messageId: context.turn!.messageId })),
      // Messages wait for the next turn: it starts before this reply is stored, and must see it.
      assign(({ context }) => ({
        turn: undefined,
        lastReply: context.queue.length > 0 ? { turnId: context.turn!.turnId, text: context.turn!.replyText ?? '' } : undefined,
      })),
    ],
  },
});
