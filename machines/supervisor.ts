// The process supervisor: lifecycle only (spawn, stop, limits, passivation).
// SDK frames and conversation messages never pass through it; the gateway and
// the conversation host talk to the child / conversation refs directly.
//
// - SDK connections: `sdk.connected` spawns an `sdkConnection` child named by
//   its connectionId when under `maxSdkConnections`; `sdk.closed` forwards
//   `socket.closed` and frees the slot.
// - Conversations are separate root actors (virtual actors owned by the
//   conversation host). The host reports their lifecycle only
//   (`conversation.activated` / `conversation.passivated`, never per message:
//   activity times stay in the host, copying a map per message would be the
//   cost). On `tick` the supervisor decides: when any conversation is active it
//   asks for those idle since `at - idleMs` to be passivated.
// - A child's failure (`xstate.error.actor.*`) frees its slot and is reported;
//   it never stops the supervisor.
import { assign, enqueueActions, setup, spawnChild, stopChild, type ActorRefFrom } from 'xstate';
import { sdkConnectionMachine } from './sdkConnection.ts';

export interface SupervisorInput {
  maxSdkConnections: number;
  idleMs: number;
}

export interface SupervisorContext {
  maxSdkConnections: number;
  idleMs: number;
  /** connectionId → connectedAt (a slot is held until `sdk.closed` or the child fails). */
  sdkConnections: Record<string, number>;
  /** Active conversations (activated and not yet passivated). */
  conversations: number;
  refusedSdkConnections: number;
  failedChildren: number;
}

export type SupervisorEvent =
  | { type: 'sdk.connected'; connectionId: string; at?: number }
  | { type: 'sdk.closed'; connectionId: string; code?: number }
  | { type: 'conversation.activated'; conversationId: string }
  | { type: 'conversation.passivated'; conversationId: string }
  | { type: 'tick'; at: number };

export interface SupervisorEffects {
  /** Passivate the conversations with no activity since `idleBefore` (ms; "idle longer than idleMs"). */
  passivate: { idleBefore: number };
  sdkRefused: { connectionId: string; limit: number };
  childFailed: { childId: string; error: unknown };
}

const CHILD_ERROR_PREFIX = 'xstate.error.actor.';
const CHILD_DONE_PREFIX = 'xstate.done.actor.';

const without = (record: Record<string, number>, key: string): Record<string, number> => {
  if (!(key in record)) return record;
  const next = { ...record };
  delete next[key];
  return next;
};

export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
    input: {} as SupervisorInput,
  },
  actors: {
    sdkConnection: sdkConnectionMachine,
  },
  actions: {
    passivate: (_, _params: SupervisorEffects['passivate']) => {},
    sdkRefused: (_, _params: SupervisorEffects['sdkRefused']) => {},
    childFailed: (_, _params: SupervisorEffects['childFailed']) => {},
  },
  guards: {
    sdkSlotFree: ({ context, event }) =>
      event.type === 'sdk.connected' &&
      !(event.connectionId in context.sdkConnections) &&
      Object.keys(context.sdkConnections).length < context.maxSdkConnections,
  },
}).createMachine({
  id: 'supervisor',
  context: ({ input }) => ({
    maxSdkConnections: input.maxSdkConnections,
    idleMs: input.idleMs,
    sdkConnections: {},
    conversations: 0,
    refusedSdkConnections: 0,
    failedChildren: 0,
  }),
  initial: 'running',
  states: {
    running: {
      on: {
        'sdk.connected': [
          {
            guard: 'sdkSlotFree',
            actions: [
              assign({ sdkConnections: ({ context, event }) => Object.assign({}, context.sdkConnections, { [event.connectionId]: event.at ?? 0 }) }),
              spawnChild('sdkConnection', {
                id: ({ event }) => (event as { connectionId: string }).connectionId,
                input: ({ event }) => {
                  const e = event as { connectionId: string; at?: number };
                  return { connectionId: e.connectionId, connectedAt: e.at ?? 0 };
                },
              }),
            ],
          },
          {
            actions: [
              assign({ refusedSdkConnections: ({ context }) => context.refusedSdkConnections + 1 }),
              { type: 'sdkRefused', params: ({ context, event }) => ({ connectionId: event.connectionId, limit: context.maxSdkConnections }) },
            ],
          },
        ],
        'sdk.closed': {
          actions: [
            enqueueActions(({ event, enqueue, self }) => {
              // The child may already be gone (final after the register timeout, or failed).
              const child = self.getSnapshot().children[event.connectionId] as ActorRefFrom<typeof sdkConnectionMachine> | undefined;
              if (child) enqueue.sendTo(child, { type: 'socket.closed', code: event.code });
            }),
            assign({ sdkConnections: ({ context, event }) => without(context.sdkConnections, event.connectionId) }),
          ],
        },
        // The runtime reports each conversation once per activation and once per passivation.
        'conversation.activated': {
          actions: assign({ conversations: ({ context }) => context.conversations + 1 }),
        },
        'conversation.passivated': {
          actions: assign({ conversations: ({ context }) => Math.max(0, context.conversations - 1) }),
        },
        tick: {
          guard: ({ context }) => context.conversations > 0,
          actions: { type: 'passivate', params: ({ context, event }) => ({ idleBefore: event.at - context.idleMs }) },
        },
        // A connection actor that reached `closed` leaves the children map; its slot stays until `sdk.closed`.
        'xstate.done.actor.*': {
          actions: stopChild(({ event }: { event: { type: string } }) => event.type.slice(CHILD_DONE_PREFIX.length)),
        },
        'xstate.error.actor.*': {
          actions: [
            stopChild(({ event }: { event: { type: string } }) => event.type.slice(CHILD_ERROR_PREFIX.length)),
            assign(({ context, event }) => {
              const childId = event.type.slice(CHILD_ERROR_PREFIX.length);
              return { sdkConnections: without(context.sdkConnections, childId), failedChildren: context.failedChildren + 1 };
            }),
            {
              type: 'childFailed',
              params: ({ event }: { event: { type: string } }) => ({
                childId: event.type.slice(CHILD_ERROR_PREFIX.length),
                error: (event as { error?: unknown }).error,
              }),
            },
          ],
        },
      },
    },
  },
});

export type SupervisorMachine = typeof supervisorMachine;
