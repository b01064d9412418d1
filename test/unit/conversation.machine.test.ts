import { describe, expect, it } from 'vitest';
import {
  APOLOGY_LLM_FAILED,
  APOLOGY_TOO_MANY_STEPS,
  toolContent,
  UNREADABLE_RESULT,
  type ConversationOutput,
  type InvokeOutcome,
  type InvokeToolInput,
  type LlmStepInput,
  type LlmStepOutput,
} from '../../machines/conversation.ts';
import { createManualClock } from '../../src/clock.ts';
import { startConversation } from '../support/conversation-actor.ts';

type Script = (input: LlmStepInput) => LlmStepOutput | Promise<LlmStepOutput>;

function harness(o: {
  llm: Script;
  tool?: (input: InvokeToolInput) => InvokeOutcome | Promise<InvokeOutcome>;
  timeoutMs?: number;
  maxToolSteps?: number;
  snapshot?: unknown;
  clock?: ReturnType<typeof createManualClock>;
  gatherMs?: number;
}) {
  return startConversation({
    llm: o.llm,
    tool: o.tool,
    snapshot: o.snapshot,
    clock: o.clock,
    input: { maxToolSteps: o.maxToolSteps ?? 3, confirmationTimeoutMs: o.timeoutMs ?? 60_000, offlineAfterMs: 10 * 60_000, gatherMs: o.gatherMs ?? 0 },
  });
}

const call = (name: string, requiresConfirmation = false) => ({
  id: `call-${name}`,
  name,
  args: { orderId: '1001' },
  requiresConfirmation,
  summary: `${name} 1001`,
});

/** An LLM that calls `name` on step 1 and answers with the last tool result on step 2. */
const toolThenAnswer =
  (name: string, confirm = false): Script =>
  (input) => {
    const last = input.transcript.at(-1)!;
    if (last.role === 'tool') return { kind: 'reply', text: `${last.ok ? 'ok' : 'not done'}: ${last.content}` };
    return { kind: 'tools', calls: [call(name, confirm)] };
  };

describe('conversation machine', () => {
  it('read tool → invoke → reply built from the result; back to idle', async () => {
    const h = harness({ llm: toolThenAnswer('getOrderStatus') });
    h.send('status of 1001?', 'm1');
    await h.settle();
    expect(h.invocations).toHaveLength(1);
    expect(h.replies()).toEqual(['ok: {"status":"shipped"}']);
    expect(h.actor.getSnapshot().value).toBe('idle');
    expect(h.actor.getSnapshot().context.turn).toBeUndefined();
    const types = h.outputs.map((o) =>
      o.type === 'tool' ? `tool.${o.phase}` : o.type === 'turn' ? `turn.${o.phase}` : o.type === 'typing' ? `typing.${o.on}` : o.type,
    );
    expect(types).toEqual(['turn.started', 'typing.true', 'tool.invoked', 'tool.result', 'reply', 'typing.false', 'turn.ended']);
  });

  it('write tool → confirm → approve → invoked exactly once → reply', async () => {
    const h = harness({ llm: toolThenAnswer('cancelOrder', true) });
    h.send('cancel 1001', 'm1');
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('awaitingConfirmation');
    const confirm = h.outputs.find((o) => o.type === 'confirm') as Extract<ConversationOutput, { type: 'confirm' }>;
    expect(confirm).toMatchObject({ name: 'cancelOrder', args: { orderId: '1001' }, summary: 'cancelOrder 1001' });
    expect(h.invocations).toHaveLength(0);
    h.actor.send({ type: 'customer.confirm', at: h.clock.now(), confirmationId: 'wrong', approve: true });
    await h.settle();
    expect(h.invocations).toHaveLength(0);
    h.actor.send({ type: 'customer.confirm', at: h.clock.now(), confirmationId: confirm.id, approve: true });
    await h.settle();
    expect(h.invocations).toHaveLength(1);
    expect(h.outputs).toContainEqual({ type: 'confirmation', id: confirm.id, turnId: 'c1:m1', name: 'cancelOrder', outcome: 'approved' });
    expect(h.replies()).toEqual(['ok: {"status":"shipped"}']);
  });

  it('deny → never invoked, the LLM is told', async () => {
    const h = harness({ llm: toolThenAnswer('cancelOrder', true) });
    h.send('cancel 1001', 'm1');
    await h.settle();
    const confirm = h.outputs.find((o) => o.type === 'confirm') as Extract<ConversationOutput, { type: 'confirm' }>;
    h.actor.send({ type: 'customer.confirm', at: h.clock.now(), confirmationId: confirm.id, approve: false });
    await h.settle();
    expect(h.invocations).toHaveLength(0);
    expect(h.replies()[0]).toMatch(/^not done: The customer declined/);
    expect(h.outputs).toContainEqual({ type: 'confirmation', id: confirm.id, turnId: 'c1:m1', name: 'cancelOrder', outcome: 'denied' });
  });

  it('an unanswered confirmation expires at the timeout, not before', async () => {
    const h = harness({ llm: toolThenAnswer('cancelOrder', true), timeoutMs: 60_000 });
    h.send('cancel 1001', 'm1');
    await h.settle();
    h.clock.advance(59_999);
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('awaitingConfirmation');
    h.clock.advance(1);
    await h.settle();
    expect(h.invocations).toHaveLength(0);
    expect(h.outputs.some((o) => o.type === 'confirmation' && o.outcome === 'expired')).toBe(true);
    expect(h.replies()[0]).toMatch(/did not confirm in time/);
    expect(h.actor.getSnapshot().value).toBe('idle');
  });

  it('a slow LLM does not shorten the confirmation window: the timeout counts from the moment of asking', async () => {
    const clock = createManualClock(1_000_000);
    const script = toolThenAnswer('cancelOrder', true);
    const h = harness({
      clock,
      timeoutMs: 60_000,
      llm: (input) => {
        clock.advance(10_000); // the LLM takes 10 s
        return script(input);
      },
    });
    h.send('cancel 1001', 'm1');
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('awaitingConfirmation');
    expect(h.actor.getSnapshot().context.turn!.pending!.deadline).toBe(1_000_000 + 10_000 + 60_000);
    h.clock.advance(59_999);
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('awaitingConfirmation');
    const confirm = h.outputs.find((o) => o.type === 'confirm') as Extract<ConversationOutput, { type: 'confirm' }>;
    h.actor.send({ type: 'customer.confirm', at: h.clock.now(), confirmationId: confirm.id, approve: true });
    await h.settle();
    expect(h.invocations).toHaveLength(1);
    expect(h.outputs.some((o) => o.type === 'confirmation' && o.outcome === 'expired')).toBe(false);
  });

  it('the confirmation deadline survives a restore: re-armed with the time left', async () => {
    const first = harness({ llm: toolThenAnswer('cancelOrder', true), timeoutMs: 60_000 });
    first.send('cancel 1001', 'm1');
    await first.settle();
    first.clock.advance(20_000);
    const persisted = first.actor.getPersistedSnapshot();
    first.actor.stop();

    const clock = createManualClock(first.clock.now() + 10_000); // restarted 10 s later
    const h = harness({ llm: toolThenAnswer('cancelOrder', true), timeoutMs: 60_000, snapshot: JSON.parse(JSON.stringify(persisted)), clock });
    h.actor.send({ type: 'restored', at: clock.now() });
    expect(h.actor.getSnapshot().value).toBe('awaitingConfirmation');
    clock.advance(29_999);
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('awaitingConfirmation');
    clock.advance(1);
    await h.settle();
    expect(h.outputs.some((o) => o.type === 'confirmation' && o.outcome === 'expired')).toBe(true);
    expect(h.invocations).toHaveLength(0);
  });

  it('tool result and failure events carry the call duration, measured on the injected clock', async () => {
    const clock = createManualClock(1_000_000);
    let n = 0;
    const h = harness({
      clock,
      llm: (input) =>
        input.transcript.filter((e) => e.role === 'tool').length < 2
          ? { kind: 'tools', calls: [{ ...call('getOrderStatus'), id: `c${input.step}` }] }
          : { kind: 'reply', text: 'done' },
      tool: () => {
        clock.advance(n === 0 ? 2_500 : 700);
        return n++ === 0 ? { ok: true, data: 1 } : { ok: false, error: { message: 'down' } };
      },
    });
    h.send('status?', 'm1');
    await h.settle();
    const tools = h.outputs.filter((o): o is Extract<ConversationOutput, { content: string }> => o.type === 'tool' && o.phase !== 'invoked');
    expect(tools.map((t) => [t.phase, t.durationMs])).toEqual([
      ['result', 2_500],
      ['failed', 700],
    ]);
  });

  it('two messages back to back → two replies, in order', async () => {
    const h = harness({ llm: (i) => ({ kind: 'reply', text: `re: ${(i.transcript[0] as { text: string }).text}` }) });
    h.send('one', 'a');
    h.send('two', 'b');
    await h.settle();
    expect(h.replies()).toEqual(['re: one', 're: two']);
  });

  it('messages arriving mid-turn wait in order and are answered together by the next turn (a burst is one turn)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const texts = (i: LlmStepInput) => i.transcript.filter((e) => e.role === 'user').map((e) => (e as { text: string }).text);
    const h = harness({
      llm: async (i) => {
        if (texts(i)[0] === 'first') await gate;
        return { kind: 'reply', text: `re: ${texts(i).join(' + ')}` };
      },
    });
    h.send('first', '1');
    h.send('second', '2');
    h.send('third', '3');
    await h.settle();
    expect(h.actor.getSnapshot().context.queue.map((q) => q.text)).toEqual(['second', 'third']);
    release();
    await h.settle();
    expect(h.replies()).toEqual(['re: first', 're: second + third']);
    expect(h.llmInputs.map((i) => i.turnId)).toEqual(['c1:1', 'c1:2']);
    const replies = h.outputs.filter((o): o is Extract<ConversationOutput, { type: 'reply' }> => o.type === 'reply');
    expect(replies.map((r) => [r.replyTo, r.answers])).toEqual([
      ['1', undefined],
      ['2', ['2', '3']],
    ]);
  });

  it('the gathering window: a burst starts one turn when its last message is gatherMs old (at most 4 windows after the first)', async () => {
    const texts = (i: LlmStepInput) => i.transcript.filter((e) => e.role === 'user').map((e) => (e as { text: string }).text);
    const h = harness({ gatherMs: 1_500, llm: (i) => ({ kind: 'reply', text: texts(i).join('|') }) });
    h.send('a', 'a');
    h.clock.advance(1_000);
    h.send('b', 'b');
    h.clock.advance(1_499);
    await h.settle();
    expect(h.llmInputs).toHaveLength(0);
    expect(h.actor.getSnapshot().value).toBe('gathering');
    h.clock.advance(1);
    await h.settle();
    expect(h.replies()).toEqual(['a|b']);

    // A burst that never pauses for a window still starts its turn 4 windows after its first message.
    const start = h.clock.now();
    for (let k = 0; k < 10; k++) {
      h.send(`x${k}`, `x${k}`);
      h.clock.advance(1_000);
      await h.settle();
    }
    expect(h.llmInputs).toHaveLength(2);
    expect(h.llmInputs[1].transcript).toHaveLength(6); // x0…x5 sent by start + 5 000 < start + 6 000
    expect(h.clock.now() - start).toBe(10_000);
  });

  it('the gathering deadline survives a restore: re-armed with the time left, or the turn starts at once when it passed', async () => {
    const first = harness({ gatherMs: 1_500, llm: () => ({ kind: 'reply', text: 'ok' }) });
    first.send('a', 'a');
    first.clock.advance(500);
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot()));
    first.actor.stop();

    const clock = createManualClock(first.clock.now() + 200);
    const h = harness({ gatherMs: 1_500, llm: () => ({ kind: 'reply', text: 'ok' }), snapshot: persisted, clock });
    h.actor.send({ type: 'restored', at: clock.now() });
    clock.advance(799);
    await h.settle();
    expect(h.replies()).toEqual([]);
    clock.advance(1);
    await h.settle();
    expect(h.replies()).toEqual(['ok']);

    const late = createManualClock(first.clock.now() + 60_000);
    const h2 = harness({ gatherMs: 1_500, llm: () => ({ kind: 'reply', text: 'late' }), snapshot: persisted, clock: late });
    h2.actor.send({ type: 'restored', at: late.now() });
    await h2.settle();
    expect(h2.replies()).toEqual(['late']);
  });

  it('messages sent while a confirmation is pending wait; the confirmation still works, then they are answered together', async () => {
    const texts = (i: LlmStepInput) => i.transcript.filter((e) => e.role === 'user').map((e) => (e as { text: string }).text);
    const h = harness({
      llm: (i) => (texts(i)[0] === 'cancel 1001' ? toolThenAnswer('cancelOrder', true)(i) : { kind: 'reply', text: `re: ${texts(i).join(' + ')}` }),
    });
    h.send('cancel 1001', 'm1');
    await h.settle();
    h.send('hello?', 'm2');
    h.send('still there?', 'm3');
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('awaitingConfirmation');
    const confirm = h.outputs.find((o) => o.type === 'confirm') as Extract<ConversationOutput, { type: 'confirm' }>;
    h.actor.send({ type: 'customer.confirm', at: h.clock.now(), confirmationId: confirm.id, approve: true });
    await h.settle();
    expect(h.invocations).toHaveLength(1);
    expect(h.replies()).toEqual(['ok: {"status":"shipped"}', 're: hello? + still there?']);
  });

  it('a failing tool: the LLM is told and answers', async () => {
    const h = harness({ llm: toolThenAnswer('getOrderStatus'), tool: () => ({ ok: false, error: { message: 'backend down', code: 'timeout' } }) });
    h.send('status?', 'm1');
    await h.settle();
    expect(h.replies()).toEqual(['not done: Error (timeout): backend down']);
    expect(h.outputs).toContainEqual(expect.objectContaining({ type: 'tool', phase: 'failed', error: 'backend down' }));
  });

  it('a result that cannot be serialized (30,000 deep, circular) is an unreadable-result error for the LLM, not a crash', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 30_000; i++) deep = [deep];
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    let n = 0;
    const h = harness({ llm: toolThenAnswer('getOrderStatus'), tool: () => ({ ok: true, data: n++ === 0 ? deep : circular }) });
    h.send('status?', 'm1');
    h.send('status again?', 'm2');
    await h.settle();
    expect(h.replies()).toEqual([`not done: ${UNREADABLE_RESULT}`, `not done: ${UNREADABLE_RESULT}`]);
    expect(h.outputs.filter((o) => o.type === 'tool' && o.phase === 'failed')).toHaveLength(2);
    expect(h.actor.getSnapshot().status).toBe('active');
    expect(h.actor.getSnapshot().value).toBe('idle');
    expect(() => JSON.stringify(h.actor.getPersistedSnapshot())).not.toThrow();
    expect(toolContent({ ok: true, data: 'x'.repeat(9000) })).toHaveLength(8001);
    expect(toolContent({ ok: false, error: { message: 'e'.repeat(9000) } }).length).toBeLessThanOrEqual(8001);
  });

  it('an LLM failure ends the turn with an apology, and the next message is processed', async () => {
    let n = 0;
    const h = harness({ llm: () => (n++ === 0 ? Promise.reject(new Error('500')) : { kind: 'reply', text: 'back again' }) });
    h.send('one', 'a');
    h.send('two', 'b');
    await h.settle();
    expect(h.replies()).toEqual([APOLOGY_LLM_FAILED, 'back again']);
    expect(h.actor.getSnapshot().value).toBe('idle');
    // The apology is marked as no answer (the widget does not ask "Did that answer…?"); the answer is not.
    expect(h.outputs.filter((o) => o.type === 'reply').map((o) => (o as { unanswered?: true }).unanswered)).toEqual([true, undefined]);
  });

  it('a reply the step marks unanswered (an "I don\'t know") stays marked', async () => {
    const h = harness({ llm: () => ({ kind: 'reply', text: "I don't know.", unanswered: true }) });
    h.send('capital of France?', 'm1');
    await h.settle();
    expect(h.outputs.find((o) => o.type === 'reply')).toMatchObject({ text: "I don't know.", unanswered: true });
  });

  it('maxToolSteps N means at most N LLM steps: tools asked for in steps 1…N−1 run, step N may only answer', async () => {
    const twoToolsThenAnswer: Script = (input) =>
      input.step < 3 ? { kind: 'tools', calls: [{ ...call('getOrderStatus'), id: `c${input.step}` }] } : { kind: 'reply', text: 'answered' };
    const three = harness({ llm: twoToolsThenAnswer, maxToolSteps: 3 });
    three.send('x', 'm1');
    await three.settle();
    expect([three.llmInputs.length, three.invocations.length, three.replies()]).toEqual([3, 2, ['answered']]);
    const two = harness({ llm: twoToolsThenAnswer, maxToolSteps: 2 });
    two.send('x', 'm1');
    await two.settle();
    expect([two.llmInputs.length, two.invocations.length, two.replies()]).toEqual([2, 1, [APOLOGY_TOO_MANY_STEPS]]);
    const one = harness({ llm: twoToolsThenAnswer, maxToolSteps: 1 });
    one.send('x', 'm1');
    await one.settle();
    expect([one.llmInputs.length, one.invocations.length, one.replies()]).toEqual([1, 0, [APOLOGY_TOO_MANY_STEPS]]);
  });

  it('stops after maxToolSteps with an honest reply', async () => {
    const h = harness({ llm: () => ({ kind: 'tools', calls: [call('getOrderStatus')] }), maxToolSteps: 2 });
    h.send('loop', 'm1');
    await h.settle();
    expect(h.invocations).toHaveLength(1);
    expect(h.llmInputs).toHaveLength(2);
    expect(h.replies()).toEqual([APOLOGY_TOO_MANY_STEPS]);
    expect(h.outputs.find((o) => o.type === 'reply')).toMatchObject({ unanswered: true });
  });

  it('a snapshot taken mid-invoke re-runs the invoke with the same invocationId after restore', async () => {
    let hang = true;
    const first = harness({ llm: toolThenAnswer('getOrderStatus'), tool: () => (hang ? new Promise(() => {}) : { ok: true, data: 1 }) });
    first.send('status?', 'm1');
    await first.settle();
    expect(first.actor.getSnapshot().value).toBe('callingTool');
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot()));
    first.actor.stop();
    hang = false;
    const h = harness({ llm: toolThenAnswer('getOrderStatus'), tool: () => ({ ok: true, data: 1 }), snapshot: persisted });
    h.actor.send({ type: 'restored', at: h.clock.now() });
    await h.settle();
    expect(h.invocations).toHaveLength(1);
    expect(h.invocations[0].invocationId).toBe(first.invocations[0].invocationId);
    expect(h.replies()).toEqual(['ok: 1']);
  });

  it('a message id seen before is ignored', async () => {
    const h = harness({ llm: () => ({ kind: 'reply', text: 'hi' }) });
    h.send('hello', 'same');
    await h.settle();
    h.send('hello', 'same');
    await h.settle();
    expect(h.replies()).toEqual(['hi']);
  });

  it('keeps an idle snapshot small', async () => {
    const h = harness({ llm: toolThenAnswer('getOrderStatus') });
    h.send('status?', 'm1');
    await h.settle();
    expect(JSON.stringify(h.actor.getPersistedSnapshot()).length).toBeLessThan(2048);
  });
});
