// A turn's tool calls, one at a time: `nextCall` (the next call, or back to the LLM when all are done),
// `awaitingConfirmation` (the customer approves or declines a call that needs it; its deadline lives in context)
// and `callingTool` (the SDK invoke).
import { and, assign, emit } from 'xstate';
import { conversationSetup } from './setup.ts';
import {
  confirmationDecided,
  currentCall,
  DECLINED_CONTENT,
  EXPIRED_CONTENT,
  invocationIdFor,
  invokeError,
  recordResult,
  skipCall,
  toolFinished,
  toolInvoked,
} from './tool-results.ts';
import type { InvokeToolInput } from './types.ts';

export const nextCall = conversationSetup.createStateConfig({
  always: [
    {
      guard: 'callsDone',
      target: 'thinking',
      actions: assign(({ context }) => ({ turn: Object.assign({}, context.turn!, { step: context.turn!.step + 1, calls: [], callIndex: 0 }) })),
    },
    // Asked for a person earlier in this turn: handed over instead of asking the customer to confirm.
    { guard: and(['needsConfirmation', 'handoffAsked']), target: 'withHuman', actions: 'cancelForHandoff' },
    {
      guard: 'needsConfirmation',
      target: 'awaitingConfirmation',
      actions: [
        assign(({ context }) => {
          const call = currentCall(context);
          return {
            turn: Object.assign({}, context.turn!, {
              pending: { confirmationId: invocationIdFor(context.turn!, call), deadline: context.lastAt + context.confirmationTimeoutMs },
            }),
          };
        }),
        emit(({ context }) => {
          const call = currentCall(context);
          return {
            type: 'confirm',
            id: context.turn!.pending!.confirmationId,
            turnId: context.turn!.turnId,
            name: call.name,
            args: call.args,
            summary: call.summary,
          };
        }),
        // The customer's turn now: no typing indicator while we wait.
        emit({ type: 'typing', on: false }),
      ],
    },
    {
      target: 'callingTool',
      actions: [
        assign(({ context }) => ({ turn: Object.assign({}, context.turn!, { callStartedAt: context.lastAt }) })),
        emit(({ context }) => toolInvoked(context)),
      ],
    },
  ],
});

export const awaitingConfirmation = conversationSetup.createStateConfig({
  // Asked while the turn ran (before this confirmation): handed over now rather than after the customer answers.
  always: { guard: 'handoffAsked', target: 'withHuman', actions: 'cancelForHandoff' },
  after: {
    confirmationLeft: {
      target: 'nextCall',
      actions: [
        emit(({ context }) => confirmationDecided(context, 'expired')),
        assign(({ context }) => ({
          lastAt: Math.max(context.lastAt, context.turn!.pending!.deadline),
          turn: skipCall(context, EXPIRED_CONTENT),
        })),
      ],
    },
  },
  on: {
    'customer.confirm': [
      {
        guard: and(['matchesPending', 'approved']),
        target: 'callingTool',
        actions: [
          emit(({ context }) => confirmationDecided(context, 'approved')),
          assign(({ context, event }) => ({ lastAt: event.at, turn: Object.assign({}, context.turn!, { pending: undefined, callStartedAt: event.at }) })),
          emit({ type: 'typing', on: true }),
          emit(({ context }) => toolInvoked(context)),
        ],
      },
      {
        guard: 'matchesPending',
        target: 'nextCall',
        actions: [
          emit({ type: 'typing', on: true }),
          emit(({ context }) => confirmationDecided(context, 'denied')),
          assign(({ context, event }) => ({ lastAt: event.at, turn: skipCall(context, DECLINED_CONTENT) })),
        ],
      },
    ],
    // A person takes over now: the write waiting for the customer's yes is cancelled (a late answer is refused).
    'handoff.request': { target: 'withHuman', actions: 'cancelForHandoff' },
    restored: {
      target: 'awaitingConfirmation',
      reenter: true,
      actions: assign({ lastAt: ({ event }) => event.at }),
    },
  },
});

export const callingTool = conversationSetup.createStateConfig({
  invoke: {
    src: 'invokeTool',
    input: ({ context }) => {
      const call = currentCall(context);
      const input: InvokeToolInput = {
        invocationId: invocationIdFor(context.turn!, call),
        name: call.name,
        args: call.args,
        conversationId: context.conversationId,
        customerId: context.customerId,
      };
      return call.requiresConfirmation ? Object.assign(input, { confirmed: true, summary: call.summary }) : input;
    },
    onDone: {
      target: 'nextCall',
      actions: [
        assign(({ context, event }) => recordResult(context, event.output, event.output.at)),
        emit(({ context, event }) => toolFinished(context, event.output, event.output.at)),
      ],
    },
    onError: {
      target: 'nextCall',
      actions: [
        assign(({ context, event }) => recordResult(context, invokeError(event.error))),
        emit(({ context, event }) => toolFinished(context, invokeError(event.error))),
      ],
    },
  },
});
