// The states between turns: `idle` (a handoff asked for, or messages waiting), `gathering` (a burst's window is
// open) and `starting` (the queued messages become one turn).
import { and, assign, emit, not } from 'xstate';
import { newHumanMode } from '../human.ts';
import { requestedOutput } from './handoff.ts';
import { conversationSetup } from './setup.ts';
import { gatherDue, RECENT_IDS } from './turn.ts';

export const idle = conversationSetup.createStateConfig({
  always: [
    {
      guard: 'handoffAsked',
      target: 'withHuman',
      actions: [
        'forwardQueued',
        assign(({ context }) => ({
          human: newHumanMode(context.lastAt, 'api', context.handoffAsked!.reason, context.handoffAsked!.agentId),
          handoffAsked: undefined,
          queue: [],
        })),
        emit(({ context }) => requestedOutput(context.human!)),
      ],
    },
    { guard: and(['hasQueued', 'gathering']), target: 'gathering' },
    { guard: 'hasQueued', target: 'starting' },
  ],
});

// A burst is gathering: its turn starts when the window closes; each new message re-arms it. The due time is
// computed from the queued messages' times (in the snapshot), so `restored` re-arms it with the time left.
export const gathering = conversationSetup.createStateConfig({
  always: [
    { guard: 'handoffAsked', target: 'idle' },
    // Restored after its due time: no timer needed.
    { guard: not('gathering'), target: 'starting' },
  ],
  after: {
    gatherLeft: { target: 'starting', actions: assign(({ context }) => ({ lastAt: Math.max(context.lastAt, gatherDue(context) ?? context.lastAt) })) },
  },
  on: {
    'customer.message': {
      guard: 'isNewMessage',
      target: 'gathering',
      reenter: true,
      actions: assign(({ context, event }) => ({
        lastAt: event.at,
        queue: [...context.queue, { messageId: event.messageId, text: event.text, at: event.at }],
        recent: [...context.recent, event.messageId].slice(-RECENT_IDS),
      })),
    },
    restored: { target: 'gathering', reenter: true, actions: assign({ lastAt: ({ event }) => event.at }) },
  },
});

// Every queued message goes into one turn (a burst is answered together, in order); transient.
export const starting = conversationSetup.createStateConfig({
  always: {
    target: 'thinking',
    actions: [
      assign(({ context }) => {
        const batch = context.bursts === false ? context.queue.slice(0, 1) : context.queue;
        const [first] = batch;
        const turnId = `${context.conversationId}:${first.messageId}`;
        return {
          queue: context.queue.slice(batch.length),
          turn: {
            turnId,
            messageId: first.messageId,
            messageIds: batch.map((m) => m.messageId),
            step: 1,
            transcript: batch.map((m) => ({ role: 'user' as const, text: m.text })),
            calls: [],
            callIndex: 0,
            ...(context.lastReply ? { previousReply: context.lastReply } : {}),
          },
          lastReply: undefined,
        };
      }),
      emit(({ context }) => ({ type: 'turn', turnId: context.turn!.turnId, phase: 'started', messageId: context.turn!.messageId })),
      emit({ type: 'typing', on: true }),
    ],
  },
});
