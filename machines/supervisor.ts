// The process supervisor: lifecycle only (spawn, stop, limits, passivation).
// SDK frames and conversation messages never pass through it; the gateway and
// the conversation host talk to the child / conversation refs directly.
//
// - SDK connections: `sdk.connected` spawns an `sdkConnection` child named by
//   its connectionId when under `maxSdkConnections`; `sdk.closed` forwards
//   `socket.closed` and frees the slot.
// - Conversations are separate root actors (virtual actors owned by the
//   conversation host); the supervisor only tracks ids and last-activity times
//   and, on `tick`, asks for the idle ones to be passivated.
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
  /** conversationId → lastActiveAt. */
  conversations: Record<string, number>;
  refusedSdkConnections: number;
  failedChildren: number;
}

export type SupervisorEvent =
  | { type: 'sdk.connected'; connectionId: string; at?: number }
  | { type: 'sdk.closed'; connectionId: string; code?: number }
  | { type: 'conversation.activated'; conversationId: string; at: number }
  | { type: 'conversation.touched'; conversationId: string; at: number }
  | { type: 'conversation.passivated'; conversationId: string }
  | { type: 'tick'; at: number };

export interface SupervisorEffects {
  passivate: { conversationIds: string[] };
  sdkRefused: { connectionId: string; limit: number };
  childFailed: { childId: string; error: unknown };
}

const CHILD_ERROR_PREFIX = 'xstate.error.actor.';
const CHILD_DONE_PREFIX = 'xstate.done.actor.';

export function idleConversations(conversations: Record<string, number>, at: number, idleMs: number): string[] {
  const ids: string[] = [];
  for (const [id, lastActiveAt] of Object.entries(conversations)) if (at - lastActiveAt > idleMs) ids.push(id);
  return ids;
}

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
    conversations: {},
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
              assign({ sdkConnections: ({ context, event }) => ({ ...context.sdkConnections, [event.connectionId]: event.at ?? 0 }) }),
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
        'conversation.activated': {
          actions: assign({ conversations: ({ context, event }) => ({ ...context.conversations, [event.conversationId]: event.at }) }),
        },
        'conversation.touched': {
          actions: assign({
            conversations: ({ context, event }) =>
              event.conversationId in context.conversations ? { ...context.conversations, [event.conversationId]: event.at } : context.conversations,
          }),
        },
        'conversation.passivated': {
          actions: assign({ conversations: ({ context, event }) => without(context.conversations, event.conversationId) }),
        },
        tick: {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const ids = idleConversations(context.conversations, event.at, context.idleMs);
            if (ids.length > 0) enqueue({ type: 'passivate', params: { conversationIds: ids } });
          }),
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
