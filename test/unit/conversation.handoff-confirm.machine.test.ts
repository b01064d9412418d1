// A handoff while a write confirmation waits (issue 34, part 6): the confirmation is cancelled, a person has the
// conversation at once, a late answer changes nothing and the write never runs. Pure machine, fake actors, manual clock.
import { describe, expect, it } from 'vitest';
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
import { createManualClock, xstateClock } from '../../src/clock.ts';

const REFUND = { id: 'call1', name: 'refund', args: { order: 7 }, requiresConfirmation: true, summary: 'Refund order 7' };

function harness() {
  const clock = createManualClock(1_000_000);
  const outputs: ConversationOutput[] = [];
  const invoked: InvokeToolInput[] = [];
  let llmCalls = 0;
  const machine = conversationMachine.provide({
    actors: {
      llm: fromPromise<Timed<LlmStepOutput>, LlmStepInput>(async () => {
        llmCalls++;
        return { kind: 'tools' as const, calls: [REFUND], at: clock.now() };
      }),
      invokeTool: fromPromise<Timed<InvokeOutcome>, InvokeToolInput>(async ({ input }) => {
        invoked.push(input);
        return { ok: true as const, data: 'refunded', at: clock.now() };
      }),
    },
  });
  const actor = createActor(machine, {
    input: { conversationId: 'c1', customerId: 'u1', channel: 'web', maxToolSteps: 3, confirmationTimeoutMs: 300_000, offlineAfterMs: 10 * 60_000 },
    clock: xstateClock(clock),
  });
  actor.on('*', (o) => void outputs.push(o));
  actor.start();
  const until = async (ok: () => boolean) => {
    for (const end = Date.now() + 15_000; !ok() && Date.now() < end;) await new Promise((r) => setTimeout(r, 2));
    expect(ok()).toBe(true);
  };
  const of = <T extends ConversationOutput['type']>(type: T) => outputs.filter((x): x is Extract<ConversationOutput, { type: T }> => x.type === type);
  return { actor, clock, outputs, invoked, of, until, llmCalls: () => llmCalls };
}

describe('conversation machine: a handoff while a confirmation waits', () => {
  it('cancels the confirmation and hands over at once; a late approve is ignored and the write never runs', async () => {
    const h = harness();
    h.actor.send({ type: 'customer.message', at: h.clock.now(), messageId: 'm1', text: 'refund order 7' });
    await h.until(() => h.actor.getSnapshot().value === 'awaitingConfirmation');
    const confirmId = h.of('confirm')[0].id;
    h.clock.advance(5_000);
    h.actor.send({ type: 'handoff.request', at: h.clock.now(), reason: 'agent took it' });
    expect(h.actor.getSnapshot().value).toBe('withHuman');
    expect(h.of('confirmation')).toEqual([{ type: 'confirmation', id: confirmId, turnId: 'c1:m1', name: 'refund', outcome: 'cancelled', reason: 'handoff' }]);
    expect(h.of('handoff')).toEqual([{ type: 'handoff', id: 'h:1005000', phase: 'requested', source: 'api', reason: 'agent took it' }]);
    expect(h.of('turn').map((t) => t.phase)).toEqual(['started', 'ended']);
    expect(h.actor.getSnapshot().context.turn).toBeUndefined();
    // The customer presses "approve" on the old card: nothing happens.
    h.actor.send({ type: 'customer.confirm', at: h.clock.now(), confirmationId: confirmId, approve: true });
    await new Promise((r) => setTimeout(r, 20));
    expect(h.actor.getSnapshot().value).toBe('withHuman');
    expect(h.invoked).toEqual([]);
    expect(h.of('tool')).toEqual([]);
    // An agent can reply at once (no 300 s wait).
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'a1', text: 'Alex here', author: { name: 'Alex' } });
    expect(h.of('agent').map((a) => a.text)).toEqual(['Alex here']);
    // The old deadline does not fire later.
    h.clock.advance(300_000);
    expect(h.of('confirmation')).toHaveLength(1);
  });

  it('a handoff asked while the turn ran hands over when the turn reaches a confirmation, without asking it', async () => {
    const h = harness();
    h.actor.send({ type: 'customer.message', at: h.clock.now(), messageId: 'm1', text: 'refund order 7' });
    h.actor.send({ type: 'handoff.request', at: h.clock.now() });
    expect(h.actor.getSnapshot().value).toBe('thinking');
    await h.until(() => h.actor.getSnapshot().value === 'withHuman');
    expect(h.of('confirm')).toEqual([]);
    expect(h.of('confirmation')).toEqual([]);
    expect(h.of('turn').map((t) => t.phase)).toEqual(['started', 'ended']);
    expect(h.invoked).toEqual([]);
    expect(h.actor.getSnapshot().context.handoffAsked).toBeUndefined();
  });

  it('an agent message with an id already shown changes nothing, also after the snapshot is restored elsewhere', async () => {
    const h = harness();
    h.actor.send({ type: 'handoff.request', at: h.clock.now() });
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'agent_k1', text: 'Alex here', author: { name: 'Alex' } });
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'agent_k1', text: 'Alex here', author: { name: 'Alex' } });
    expect(h.of('agent')).toHaveLength(1);
    const persisted = JSON.parse(JSON.stringify(h.actor.getPersistedSnapshot()));
    h.actor.stop();
    const outputs: ConversationOutput[] = [];
    const other = createActor(conversationMachine, { input: undefined as never, snapshot: persisted, clock: xstateClock(createManualClock(h.clock.now())) });
    other.on('*', (o) => void outputs.push(o));
    other.start();
    other.send({ type: 'restored', at: h.clock.now() });
    other.send({ type: 'agent.message', at: h.clock.now(), id: 'agent_k1', text: 'Alex here', author: { name: 'Alex' } });
    other.send({ type: 'agent.message', at: h.clock.now(), id: 'agent_k2', text: 'Next', author: { name: 'Alex' } });
    expect(outputs.filter((o) => o.type === 'agent').map((o) => (o as { id: string }).id)).toEqual(['agent_k2']);
  });
});
