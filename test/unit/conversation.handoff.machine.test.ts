// The conversation machine's `withHuman` state (issue 19), with fake actors and a manual clock.
import { describe, expect, it } from 'vitest';
import type { LlmStepInput, LlmStepOutput } from '../../machines/conversation.ts';
import { createManualClock } from '../../src/clock.ts';
import { startConversation } from '../support/conversation-actor.ts';

const OFFLINE_MS = 10 * 60_000;
const RETURN_MS = 30 * 60_000;

function harness(
  o: { llm?: (input: LlmStepInput) => LlmStepOutput; snapshot?: unknown; clock?: ReturnType<typeof createManualClock>; returnAfterMs?: number } = {},
) {
  const llm =
    o.llm ??
    ((input: LlmStepInput) =>
      /person/.test(JSON.stringify(input.transcript)) ? { kind: 'handoff' as const, reason: 'asked' } : { kind: 'reply' as const, text: 'Hi from the bot' });
  return startConversation({
    llm,
    tool: () => ({ ok: true as const, data: 1 }),
    snapshot: o.snapshot,
    clock: o.clock,
    input: { offlineAfterMs: OFFLINE_MS, returnAfterMs: o.returnAfterMs },
  });
}

describe('conversation machine: withHuman', () => {
  it('the model calling handoff ends the turn without a reply and hands over; later messages are forwarded, never sent to the LLM', async () => {
    const h = harness();
    h.send('I want to talk to a person', 'm1');
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('withHuman');
    expect(h.of('reply')).toHaveLength(0);
    expect(h.of('handoff')).toEqual([{ type: 'handoff', id: 'h:1000000', phase: 'requested', source: 'model', reason: 'asked', turnId: 'c1:m1' }]);
    expect(h.of('turn').map((t) => t.phase)).toEqual(['started', 'ended']);
    h.send('hello? anyone?', 'm2');
    await h.settle();
    expect(h.llmInputs).toHaveLength(1);
    expect(h.of('forward')).toEqual([{ type: 'forward', messageId: 'm2', text: 'hello? anyone?' }]);
    expect(h.actor.getSnapshot().context.queue).toEqual([]);
  });

  it('agent messages are emitted with the author; "joined" once per agent; release brings the assistant back', async () => {
    const h = harness();
    h.actor.send({ type: 'handoff.request', at: h.clock.now(), reason: 'vip' });
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('withHuman');
    expect(h.of('handoff')).toEqual([{ type: 'handoff', id: 'h:1000000', phase: 'requested', source: 'api', reason: 'vip' }]);
    h.clock.advance(90_000);
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'a1', text: 'Hi, Alex here', author: { name: 'Alex', agentId: 'agt_1' } });
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'a2', text: 'Still here', author: { name: 'Alex', agentId: 'agt_1' } });
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'a3', text: 'Sam now', author: { name: 'Sam' } });
    expect(h.of('agent').map((a) => `${a.author.name}:${a.text}`)).toEqual(['Alex:Hi, Alex here', 'Alex:Still here', 'Sam:Sam now']);
    expect(h.of('handoff').filter((x) => x.phase === 'joined')).toEqual([
      // The first agent message of the handoff carries the customer's wait (time to first agent reply).
      { type: 'handoff', id: 'j:a1', phase: 'joined', agent: { name: 'Alex', agentId: 'agt_1' }, waitedMs: 90_000 },
      { type: 'handoff', id: 'j:a3', phase: 'joined', agent: { name: 'Sam' } },
    ]);
    h.clock.advance(60_000);
    h.actor.send({ type: 'handoff.release', at: h.clock.now(), by: 'agent', agentId: 'agt_2' });
    expect(h.actor.getSnapshot().value).toBe('idle');
    // Sam wrote last without an id (a system): no lastAgentId. Time to resolution: 150 s.
    expect(h.of('handoff').at(-1)).toEqual({ type: 'handoff', id: 'r:1000000', phase: 'released', by: 'agent', agentId: 'agt_2', durationMs: 150_000 });
    h.send('thanks', 'm3');
    await h.settle();
    expect(h.of('reply').map((r) => r.text)).toEqual(['Hi from the bot']);
  });

  it('asked while a turn runs: the turn finishes, then the conversation is handed over', async () => {
    const h = harness();
    h.send('hello', 'm1');
    h.actor.send({ type: 'handoff.request', at: h.clock.now() });
    expect(h.actor.getSnapshot().value).toBe('thinking');
    await h.settle();
    expect(h.of('reply').map((r) => r.text)).toEqual(['Hi from the bot']);
    expect(h.actor.getSnapshot().value).toBe('withHuman');
  });

  it('no agent within offline_after: the offline notice, once; no silent hand-back however long nobody writes', async () => {
    const h = harness();
    h.actor.send({ type: 'handoff.request', at: h.clock.now(), agentId: 'agt_9' });
    expect(h.of('handoff')).toEqual([{ type: 'handoff', id: 'h:1000000', phase: 'requested', source: 'api', agentId: 'agt_9' }]);
    h.clock.advance(OFFLINE_MS - 1);
    expect(h.of('handoff')).toHaveLength(1);
    h.clock.advance(1);
    expect(h.of('handoff').at(-1)).toEqual({ type: 'handoff', id: 'o:1000000', phase: 'offline', since: 1000000 });
    h.send('hello?', 'm1');
    // A month (past the longest timer, which re-arms): still with the team, asked once.
    for (let i = 0; i < 30; i++) h.clock.advance(24 * 3600_000);
    expect(h.actor.getSnapshot().value).toBe('withHuman');
    expect(h.of('handoff').map((x) => x.phase)).toEqual(['requested', 'offline']);
    expect(h.llmInputs).toHaveLength(0);
  });

  it('an agent writing before offline_after: no offline notice', async () => {
    const h = harness();
    h.actor.send({ type: 'handoff.request', at: h.clock.now() });
    h.clock.advance(OFFLINE_MS - 1000);
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'a1', text: 'here', author: { name: 'Alex' } });
    h.clock.advance(3 * OFFLINE_MS);
    expect(h.of('handoff').map((x) => x.phase)).toEqual(['requested', 'joined']);
    expect(h.actor.getSnapshot().value).toBe('withHuman');
  });

  it('with return_to_assistant_after set: handed back after that long without an agent message; each agent message restarts the wait', async () => {
    const h = harness({ returnAfterMs: RETURN_MS });
    h.actor.send({ type: 'handoff.request', at: h.clock.now() });
    h.clock.advance(RETURN_MS - 1000);
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'a1', text: 'one moment', author: { name: 'Alex', agentId: 'agt_1' } });
    h.clock.advance(RETURN_MS - 1);
    expect(h.actor.getSnapshot().value).toBe('withHuman');
    // Customer messages do not count: only an agent keeps the conversation.
    h.send('still waiting', 'm9');
    h.clock.advance(1);
    expect(h.actor.getSnapshot().value).toBe('idle');
    expect(h.of('handoff').at(-1)).toEqual({
      type: 'handoff',
      id: 'r:1000000',
      phase: 'released',
      by: 'idle',
      lastAgentId: 'agt_1',
      durationMs: 2 * RETURN_MS - 1000,
    });
    // The offline notice came first (no agent within 10 minutes).
    expect(h.of('handoff').map((x) => x.phase)).toEqual(['requested', 'offline', 'joined', 'released']);
  });

  it('the state and its deadlines survive a restore', async () => {
    const first = harness({ returnAfterMs: RETURN_MS });
    first.actor.send({ type: 'handoff.request', at: first.clock.now() });
    first.clock.advance(5 * 60_000);
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot()));
    first.actor.stop();
    const clock = createManualClock(first.clock.now() + 2 * 60_000); // restarted 2 min later
    const h = harness({ snapshot: persisted, clock });
    h.actor.send({ type: 'restored', at: clock.now() });
    expect(h.actor.getSnapshot().value).toBe('withHuman');
    h.send('are you there?', 'm2');
    await h.settle();
    expect(h.of('forward')).toHaveLength(1);
    expect(h.llmInputs).toHaveLength(0);
    clock.advance(3 * 60_000 - 1);
    expect(h.of('handoff')).toEqual([]);
    clock.advance(1);
    expect(h.of('handoff')).toEqual([{ type: 'handoff', id: 'o:1000000', phase: 'offline', since: 1000000 }]);
    clock.advance(20 * 60_000 - 1);
    expect(h.actor.getSnapshot().value).toBe('withHuman');
    clock.advance(1);
    expect(h.actor.getSnapshot().value).toBe('idle');
    expect(h.of('handoff').at(-1)).toMatchObject({ phase: 'released', by: 'idle', durationMs: RETURN_MS });
  });

  it('agent messages and release outside withHuman change nothing', async () => {
    const h = harness();
    h.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'a1', text: 'x', author: { name: 'Alex' } });
    h.actor.send({ type: 'handoff.release', at: h.clock.now(), by: 'agent' });
    expect(h.actor.getSnapshot().value).toBe('idle');
    expect(h.outputs).toEqual([]);
  });
});
