// What XState alone costs on Parley's two actor-per-unit paths, with effects that resolve at once:
// a conversation turn (LLM step, SDK call, LLM step as `fromPromise` invokes) and a proactive
// request (one actor walking the checks). The turn and proactive benchmarks compare against
// baselines that do a whole turn / request in less time than this; BENCHMARKS.md ("The XState
// floor") derives the best ratio those targets allow.
//   npx tsx bench/xstate-floor.ts   (no store: the same on both engines, BENCH_ENGINE is only checked)
import { assign, createActor, emit, fromPromise, initialTransition, setup, toPromise, transition, type AnyActorLogic, type AnyEventObject } from 'xstate';
import { conversationMachine, type LlmStepInput } from '../machines/conversation.ts';
import { proactiveMachine } from '../machines/proactive.ts';
import { createProactiveRunner } from '../src/proactive/run-machine.ts';
import { benchEngine, log } from './lib.ts';

const ACTORS = 1000;
const TURNS = Number(process.env.BENCH_TURNS ?? 40_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50_000);
const ROUNDS = 4;
if (benchEngine() === 'postgres') log('BENCH_ENGINE=postgres: no store here, the floor is the same on both engines');

/** The least a turn can be in XState: three fromPromise invokes (LLM, tool, LLM) and nothing else. */
const minimalTurn = setup({
  actors: {
    llm: fromPromise(async ({ input }: { input: { step: number } }) => (input.step === 1 ? 'tools' : 'reply')),
    tool: fromPromise(async () => ({ ok: true })),
  },
}).createMachine({
  context: { step: 0 },
  initial: 'idle',
  states: {
    idle: { on: { msg: { target: 'thinking', actions: assign({ step: 1 }) } } },
    thinking: {
      invoke: {
        src: 'llm',
        input: ({ context }) => ({ step: context.step }),
        onDone: [{ guard: ({ event }) => event.output === 'reply', target: 'idle' }, { target: 'callingTool' }],
      },
    },
    callingTool: { invoke: { src: 'tool', onDone: { target: 'thinking', actions: assign({ step: ({ context }) => context.step + 1 }) } } },
  },
});

/**
 * The same turn with the effects run by whoever drives the actor (the host) instead of invoked child actors: a state
 * emits what it needs and the answer comes back as an event. What the three invokes cost is the difference.
 */
const effectsTurn = setup({
  types: {
    events: {} as { type: 'msg' } | { type: 'llm.done'; output: 'tools' | 'reply' } | { type: 'tool.done' },
    emitted: {} as { type: 'effect'; run: 'llm' | 'tool'; step: number },
  },
}).createMachine({
  context: { step: 0 },
  initial: 'idle',
  states: {
    idle: { on: { msg: { target: 'thinking', actions: assign({ step: 1 }) } } },
    thinking: {
      entry: emit(({ context }) => ({ type: 'effect' as const, run: 'llm' as const, step: context.step })),
      on: { 'llm.done': [{ guard: ({ event }) => event.output === 'reply', target: 'idle' }, { target: 'callingTool' }] },
    },
    callingTool: {
      entry: emit(({ context }) => ({ type: 'effect' as const, run: 'tool' as const, step: context.step })),
      on: { 'tool.done': { target: 'thinking', actions: assign({ step: ({ context }) => context.step + 1 }) } },
    },
  },
});
/** Runs an effects-turn actor's effects the way fromPromise would (answered in a microtask). */
function runEffects(actor: ReturnType<typeof createActor>) {
  const effects = actor as unknown as ReturnType<typeof createActor<typeof effectsTurn>>;
  effects.on('effect', (e) => {
    void Promise.resolve().then(() => effects.send(e.run === 'llm' ? { type: 'llm.done', output: e.step === 1 ? 'tools' : 'reply' } : { type: 'tool.done' }));
  });
}

/** Parley's conversation machine with an instant LLM (a tool call, then a reply) and an instant tool. */
const conversationTurn = conversationMachine.provide({
  actors: {
    llm: fromPromise(async ({ input }: { input: LlmStepInput }) =>
      input.step === 1
        ? {
            kind: 'tools' as const,
            calls: [{ id: 'c1', name: 'getOrderStatus', args: { orderId: '1001' }, requiresConfirmation: false, summary: 'Get order status' }],
            at: 0,
          }
        : { kind: 'reply' as const, text: 'Order 1001 is shipped.', at: 0 },
    ),
    invokeTool: fromPromise(async () => ({ ok: true as const, data: { orderId: '1001', status: 'shipped' }, at: 0 })),
  } as never,
});

async function turns(
  name: string,
  logic: AnyActorLogic,
  send: (i: number) => Record<string, unknown>,
  isIdle: (s: { value: unknown; context: unknown }) => boolean,
  input?: (i: number) => unknown,
  /** What the one driving the actor does before it starts (runs its effects). */
  drive: (actor: ReturnType<typeof createActor>) => void = () => undefined,
) {
  const actors = Array.from({ length: ACTORS }, (_, i) => {
    const actor = createActor(logic, input ? { input: input(i) } : {});
    drive(actor);
    return actor.start();
  });
  const waiting = new Map<number, () => void>();
  actors.forEach((a, i) => a.subscribe((s) => isIdle(s as never) && waiting.get(i)?.()));
  let seq = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const t0 = performance.now();
    for (let done = 0; done < TURNS; done += ACTORS) {
      await Promise.all(actors.map((a, i) => new Promise<void>((resolve) => (waiting.set(i, resolve), a.send(send(seq++) as never)))));
    }
    log(`${name}: round ${round}/${ROUNDS}: ${(((performance.now() - t0) / TURNS) * 1000).toFixed(1)} µs per turn`);
  }
}

await turns(
  'minimal turn (3 fromPromise invokes)',
  minimalTurn,
  () => ({ type: 'msg' }),
  (s) => s.value === 'idle',
);
await turns(
  'minimal turn (the same effects as emitted outputs, answered by events)',
  effectsTurn,
  () => ({ type: 'msg' }),
  (s) => s.value === 'idle',
  undefined,
  runEffects,
);
await turns(
  'Parley conversation turn',
  conversationTurn,
  (i) => ({ type: 'customer.message', at: 0, messageId: `m${i}`, text: 'what is the status of order 1001?' }),
  (s) => s.value === 'idle' && !(s.context as { turn?: unknown; queue: unknown[] }).turn && (s.context as { queue: unknown[] }).queue.length === 0,
  (i) => ({ conversationId: `c${i}`, customerId: `u${i}`, channel: 'web', maxToolSteps: 5, confirmationTimeoutMs: 300_000 }),
);

// The three ways to run one proactive request, with an instant reservation: an actor (Parley until issue 22),
// xstate's pure initialTransition()/transition() (each call builds a throw-away actor), and Parley's runner now
// (the machine's own pure steps on an inert scope, src/proactive/run-machine.ts).
const requestInput = (i: number) => ({
  request: { customerExternalId: 'e1', channel: 'web' as const, content: 'x', dedupKey: `k${i}` },
  enabled: true,
  customer: { customerId: 'c1', externalId: 'e1', optIn: true },
  whatsappEnabled: true,
});
const reserved = { ok: true as const, messageId: 'pm_1' };
const runner = createProactiveRunner();
const proactiveActor = proactiveMachine.provide({ actors: { reserve: fromPromise(async () => reserved) } as never });
const ways: [string, (i: number) => Promise<unknown>][] = [
  [
    'actor per request',
    (i) => {
      const actor = createActor(proactiveActor, { input: requestInput(i) as never });
      const done = toPromise(actor);
      actor.start();
      return done;
    },
  ],
  [
    "xstate's initialTransition/transition",
    async (i) => {
      const [first, actions] = initialTransition(proactiveMachine, requestInput(i));
      const spawn = actions.find((a) => a.type === 'xstate.spawnChild') as { params: { id: string } } | undefined;
      if (!spawn) return first.output;
      const output = await Promise.resolve(reserved);
      return transition(proactiveMachine, first, { type: `xstate.done.actor.${spawn.params.id}`, output } as AnyEventObject)[0].output;
    },
  ],
  ['runner (pure steps, inert scope)', (i) => runner.run(requestInput(i), { reserve: async () => reserved, deliver: () => {} })],
];
// Alternating rounds (ABBA), CPU time of this process per request: the three ways see the same machine noise.
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, run] of round % 2 === 1 ? ways : [...ways].reverse()) {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < REQUESTS; i++) await run(i);
    const used = process.cpuUsage(cpu);
    log(
      `proactive, ${name}: round ${round}/${ROUNDS}: ${((used.user + used.system) / REQUESTS).toFixed(1)} µs CPU, ${(((performance.now() - t0) / REQUESTS) * 1000).toFixed(1)} µs wall per request`,
    );
  }
}
process.exit(0);
