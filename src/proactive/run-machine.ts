// Runs one proactive request through the `proactive` machine without an actor:
// the machine's own pure steps (`getInitialSnapshot`, `transition`) compute each
// next snapshot and the actions to run, and this runner executes them: the
// `reserve` invoke (awaited, its outcome fed back as the done/error event) and the
// `deliver` entry action. The machine stays the model of the pipeline; only how
// it is run changes (issue 22 allows it for a short pipeline such as one request).
//
// Why not xstate's `initialTransition()` / `transition()`: in xstate 5.33 each call
// builds a throw-away actor (whose constructor computes an initial snapshot too),
// so a request cost ~200 µs of CPU that way against ~110 µs with an actor and
// ~70 µs here (measured with instant effects; see BENCHMARKS.md, Proactive).
// Here every step runs on one inert scope, built once per runner: `self` is an idle
// actor the machine's steps only read, and the executor collects the step's actions.
import { createActor, type ActorScope, type AnyEventObject, type ExecutableActionObject, type SnapshotFrom } from 'xstate';
import {
  proactiveMachine,
  type ProactiveDeliverInput,
  type ProactiveInput,
  type ProactiveReservation,
  type ProactiveReserveInput,
  type ProactiveResult,
} from '../../machines/proactive.ts';

type ProactiveSnapshot = SnapshotFrom<typeof proactiveMachine>;

export interface ProactiveEffects {
  /** The `reserve` invoke: the guardrail transaction. Rejecting moves the machine to `failed`. */
  reserve(input: ProactiveReserveInput): Promise<ProactiveReservation>;
  /** The `deliver` entry action of `sending`, once the reservation committed. Must not throw. */
  deliver(params: ProactiveDeliverInput): void;
}

export interface ProactiveRun {
  /** The final state: accepted, blocked or failed. */
  state: string;
  output: ProactiveResult;
}

interface SpawnAction {
  type: 'xstate.spawnChild';
  params: { id: string; src: unknown; input: ProactiveReserveInput };
}

const isSpawn = (a: ExecutableActionObject): a is ExecutableActionObject & SpawnAction => a.type === 'xstate.spawnChild';

export function createProactiveRunner() {
  // Never started: the scope's `self` and `system`, which the machine's pure steps read (a disabled request, so
  // its own initial snapshot is final at once).
  const idle = createActor(proactiveMachine, { input: { request: { customerExternalId: '-', channel: 'web', content: '-' }, enabled: false } });
  // One inert scope for every request, built once (a scope per step cost six closures each time). Its executor
  // collects the actions of one synchronous step into `pending`, which `step` empties before it returns: steps
  // never interleave, so no request sees another's actions.
  const pending: ExecutableActionObject[] = [];
  const noop = () => {};
  const scope = {
    self: idle,
    id: '',
    sessionId: '',
    system: idle.system,
    logger: noop,
    defer: noop,
    emit: noop,
    stopChild: noop,
    actionExecutor: (action: ExecutableActionObject) => void pending.push(action),
  } as unknown as ActorScope<ProactiveSnapshot, AnyEventObject>;
  /** One pure step, and the actions it asks for. */
  const step = (next: (s: typeof scope) => ProactiveSnapshot): [ProactiveSnapshot, ExecutableActionObject[]] => {
    pending.length = 0;
    try {
      return [next(scope), pending.splice(0)];
    } finally {
      pending.length = 0;
    }
  };

  return {
    async run(input: ProactiveInput, effects: ProactiveEffects): Promise<ProactiveRun> {
      let [snapshot, actions] = step((s) => proactiveMachine.getInitialSnapshot(s, input));
      for (;;) {
        let spawn: SpawnAction | undefined;
        for (const action of actions) {
          if (action.type === 'deliver') effects.deliver(action.params as ProactiveDeliverInput);
          else if (isSpawn(action)) spawn = action;
          // xstate.stopChild (the finished reservation): nothing runs, so nothing to stop.
        }
        if (snapshot.status === 'done') return { state: String(snapshot.value), output: snapshot.output as ProactiveResult };
        if (!spawn) throw new Error(`proactive machine waits in ${JSON.stringify(snapshot.value)} with nothing to wait for`);
        let event: AnyEventObject;
        try {
          event = { type: `xstate.done.actor.${spawn.params.id}`, output: await effects.reserve(spawn.params.input) };
        } catch (error) {
          event = { type: `xstate.error.actor.${spawn.params.id}`, error };
        }
        [snapshot, actions] = step((s) => proactiveMachine.transition(snapshot, event as never, s));
      }
    },
  };
}
