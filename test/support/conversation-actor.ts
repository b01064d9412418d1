// The conversation machine run alone, as the host runs it: its model step and tool call provided as promise actors
// stamped with a manual clock's time, its emitted outputs collected. Unit tests of the machine share it.
import { expect } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import {
  conversationMachine,
  type ConversationOutput,
  type InvokeOutcome,
  type InvokeToolInput,
  type LlmStepInput,
  type LlmStepOutput,
  type Timed,
} from '../../machines/conversation.ts';
import type { ConversationInput } from '../../machines/conversation/types.ts';
import { createManualClock, xstateClock, type ManualClock } from '../../src/clock.ts';

export interface ConversationActorOptions {
  /** The model's answer to each step (it may wait: a test can hold a step open). */
  llm: (input: LlmStepInput) => LlmStepOutput | Promise<LlmStepOutput>;
  /** The backend's answer to each tool call; default `{ ok: true, data: { status: 'shipped' } }`. */
  tool?: (input: InvokeToolInput) => InvokeOutcome | Promise<InvokeOutcome>;
  /** Overrides of the actor's input (conversation c1 of customer u1 on the web, 3 tool steps, 60 s to confirm). */
  input?: Partial<ConversationInput>;
  /** A persisted snapshot to resume from. */
  snapshot?: unknown;
  clock?: ManualClock;
}

export function startConversation(o: ConversationActorOptions) {
  const clock = o.clock ?? createManualClock(1_000_000);
  const outputs: ConversationOutput[] = [];
  const invocations: InvokeToolInput[] = [];
  const llmInputs: LlmStepInput[] = [];
  const machine = conversationMachine.provide({
    actors: {
      llm: fromPromise<Timed<LlmStepOutput>, LlmStepInput>(async ({ input }) => {
        llmInputs.push(structuredClone(input));
        return { ...(await o.llm(input)), at: clock.now() };
      }),
      invokeTool: fromPromise<Timed<InvokeOutcome>, InvokeToolInput>(async ({ input }) => {
        invocations.push(input);
        return { ...(o.tool ? await o.tool(input) : { ok: true as const, data: { status: 'shipped' } }), at: clock.now() };
      }),
    },
  });
  const input: ConversationInput = {
    conversationId: 'c1',
    customerId: 'u1',
    channel: 'web',
    maxToolSteps: 3,
    confirmationTimeoutMs: 60_000,
    ...o.input,
  };
  // The snapshot's type is the machine's own; tests pass one read back from JSON.
  const actor = createActor(machine, { input, clock: xstateClock(clock), snapshot: o.snapshot as never });
  // Outputs leave as emitted events (the machine's `emit`), as the host receives them.
  actor.on('*', (x) => void outputs.push(x));
  actor.start();
  const send = (text: string, messageId: string) => actor.send({ type: 'customer.message', at: clock.now(), messageId, text });
  /** Lets settled promise actors deliver their results. */
  const settle = () => new Promise((r) => setTimeout(r, 5));
  const until = async (ok: () => boolean) => {
    for (const end = Date.now() + 15_000; !ok() && Date.now() < end;) await new Promise((r) => setTimeout(r, 2));
    expect(ok()).toBe(true);
  };
  const of = <T extends ConversationOutput['type']>(type: T) => outputs.filter((x): x is Extract<ConversationOutput, { type: T }> => x.type === type);
  const replies = () => of('reply').map((r) => r.text);
  return { actor, clock, outputs, invocations, llmInputs, send, settle, until, of, replies };
}
