// A handoff while a write confirmation waits (issue 34, part 6): the confirmation is cancelled, a person has the
// conversation at once, a late answer changes nothing and the write never runs. Pure machine, fake actors, manual clock.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { startConversation } from '../support/conversation-actor.ts';

const REFUND = { id: 'call1', name: 'refund', args: { order: 7 }, requiresConfirmation: true, summary: 'Refund order 7' };

/** The model always asks for the refund; the backend would refund if it were ever called. */
const harness = () =>
  startConversation({
    llm: () => ({ kind: 'tools', calls: [REFUND] }),
    tool: () => ({ ok: true, data: 'refunded' }),
    input: { confirmationTimeoutMs: 300_000, offlineAfterMs: 10 * 60_000 },
  });

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
    expect(h.invocations).toEqual([]);
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
    expect(h.invocations).toEqual([]);
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
    const other = startConversation({ llm: () => ({ kind: 'reply', text: 'unused' }), snapshot: persisted, clock: createManualClock(h.clock.now()) });
    other.actor.send({ type: 'restored', at: h.clock.now() });
    other.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'agent_k1', text: 'Alex here', author: { name: 'Alex' } });
    other.actor.send({ type: 'agent.message', at: h.clock.now(), id: 'agent_k2', text: 'Next', author: { name: 'Alex' } });
    expect(other.of('agent').map((o) => o.id)).toEqual(['agent_k2']);
  });
});
