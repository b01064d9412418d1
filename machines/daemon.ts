// The reflection daemon: one actor on a timer. `waiting` → (interval) →
// `reviewing` (runs one injected cycle) → `waiting`. A failed cycle is
// recorded and the next one runs on time.
import { assign, fromPromise, setup } from 'xstate';

export interface DaemonInput {
  intervalMs: number;
}

export interface CycleResult {
  reviewed: number;
  followups: number;
}

export interface DaemonContext {
  intervalMs: number;
  cycles: number;
  reviewedTotal: number;
  followupsTotal: number;
  lastCycle?: CycleResult & { ok: boolean; error?: string };
}

export type DaemonEvent = { type: 'daemon.runNow' };

export const daemonMachine = setup({
  types: {
    input: {} as DaemonInput,
    context: {} as DaemonContext,
    events: {} as DaemonEvent,
  },
  actors: {
    runCycle: fromPromise<CycleResult, void>(async () => {
      throw new Error('runCycle not provided');
    }),
  },
  delays: {
    interval: ({ context }) => context.intervalMs,
  },
}).createMachine({
  id: 'daemon',
  initial: 'waiting',
  context: ({ input }) => ({ intervalMs: input.intervalMs, cycles: 0, reviewedTotal: 0, followupsTotal: 0 }),
  states: {
    waiting: {
      after: { interval: 'reviewing' },
      on: { 'daemon.runNow': 'reviewing' },
    },
    reviewing: {
      invoke: {
        src: 'runCycle',
        onDone: {
          target: 'waiting',
          actions: assign(({ context, event }) => ({
            cycles: context.cycles + 1,
            reviewedTotal: context.reviewedTotal + event.output.reviewed,
            followupsTotal: context.followupsTotal + event.output.followups,
            lastCycle: Object.assign({}, event.output, { ok: true }),
          })),
        },
        onError: {
          target: 'waiting',
          actions: assign(({ context, event }) => ({
            cycles: context.cycles + 1,
            lastCycle: { reviewed: 0, followups: 0, ok: false, error: String((event.error as Error)?.message ?? event.error) },
          })),
        },
      },
    },
  },
});
