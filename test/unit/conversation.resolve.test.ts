// A resolve is a fact of the conversation's own history: the machine's `resolve` event (pure, with a manual clock) is a
// release that names who resolved it while a person has the conversation, and a `resolved` output otherwise; what
// those outputs become (records.ts: the history record of the same write; the webhook event; the SDK's frame).
import { describe, expect, it } from 'vitest';
import type { LlmStepOutput } from '../../machines/conversation.ts';
import { handoffNotice } from '../../src/conversations/handoff-notices.ts';
import { historyIdOf } from '../../src/conversations/in-doubt-writes.ts';
import { writeOf } from '../../src/conversations/records.ts';
import type { Pending } from '../../src/conversations/types.ts';
import type { ConversationMeta } from '../../src/store/model.ts';
import { startConversation } from '../support/conversation-actor.ts';
import { conversationEvent } from '../../src/webhooks/events.ts';

const ada = { agentId: 'ag_1', name: 'Ada' };
const bob = { agentId: 'ag_2', name: 'Bob' };

/** The machine with an LLM that answers only when `answer` is called (a turn can be held mid-way). */
function harness() {
  const waiting: ((o: LlmStepOutput) => void)[] = [];
  const h = startConversation({ llm: () => new Promise((resolve) => waiting.push(resolve)), tool: () => ({ ok: true, data: 1 }) });
  const answer = (text: string) => waiting.shift()!({ kind: 'reply', text });
  return { ...h, answer };
}

describe('the conversation machine: resolve', () => {
  it('with a person: the release names who resolved it; resolved again after a new handoff and a plain release, each says its own', () => {
    const h = harness();
    h.actor.send({ type: 'handoff.request', at: h.clock.now() });
    h.clock.advance(60_000);
    h.actor.send({ type: 'resolve', at: h.clock.now(), by: ada });
    expect(h.actor.getSnapshot().value).toBe('idle');
    expect(h.outputs.at(-1)).toEqual({
      type: 'handoff',
      id: 'r:1000000',
      phase: 'released',
      by: 'agent',
      agentId: 'ag_1',
      durationMs: 60_000,
      resolvedBy: ada,
    });

    h.clock.advance(1_000);
    h.actor.send({ type: 'handoff.request', at: h.clock.now() });
    h.actor.send({ type: 'handoff.release', at: h.clock.now(), by: 'agent', agentId: 'ag_2' });
    expect(h.outputs.at(-1)).not.toHaveProperty('resolvedBy');
    h.actor.send({ type: 'handoff.request', at: h.clock.now() + 1 });
    h.actor.send({ type: 'resolve', at: h.clock.now() + 2, by: bob });
    const releases = h.outputs.filter((o) => o.type === 'handoff' && o.phase === 'released');
    expect(releases.map((o) => (o as { resolvedBy?: { name: string } }).resolvedBy?.name)).toEqual(['Ada', undefined, 'Bob']);
    expect(h.outputs.filter((o) => o.type === 'resolved')).toEqual([]);
  });

  it('with the assistant (idle, or mid-turn): a `resolved` output of its own; the state and the turn go on unchanged', async () => {
    const h = harness();
    h.actor.send({ type: 'resolve', at: h.clock.now(), by: ada });
    expect(h.actor.getSnapshot().value).toBe('idle');
    expect(h.outputs).toEqual([{ type: 'resolved', id: 'v:1000000', by: ada }]);

    h.actor.send({ type: 'customer.message', at: h.clock.now(), messageId: 'm1', text: 'hello' });
    await h.settle();
    expect(h.actor.getSnapshot().value).toBe('thinking');
    h.clock.advance(5);
    // Only the two fields are kept (a caller's extra fields do not reach the history).
    h.actor.send({ type: 'resolve', at: h.clock.now(), by: Object.assign({ role: 'admin' }, bob) });
    expect(h.actor.getSnapshot().value).toBe('thinking');
    expect(h.outputs.at(-1)).toEqual({ type: 'resolved', id: 'v:1000005', by: bob });
    h.answer('Hi!');
    await h.settle();
    expect(h.outputs.filter((o) => o.type === 'reply').map((o) => (o as { text: string }).text)).toEqual(['Hi!']);
    expect(h.actor.getSnapshot().value).toBe('idle');
  });
});

describe('a resolve, stored and told', () => {
  const meta: ConversationMeta = { conversationId: 'conv_web_c1', customerId: 'c1', externalId: 'ext-1', channel: 'web' };
  const actor = { snapshot: { value: 'idle' }, value: 'idle' };
  const released: Pending = {
    o: { type: 'handoff', id: 'r:5', phase: 'released', by: 'agent', agentId: 'ag_1', durationMs: 5, resolvedBy: ada },
    at: 10,
  };
  const plain: Pending = { o: { type: 'handoff', id: 'r:20', phase: 'released', by: 'agent', agentId: 'ag_2', durationMs: 5 }, at: 25 };
  const alone: Pending = { o: { type: 'resolved', id: 'v:30', by: bob }, at: 30 };

  it('the release record says resolved and by whom (the same write); a resolve with no handoff is a handoff record of its own', () => {
    const previous = { ...meta, state: 'withHuman', busy: true, updatedAt: 1, handoff: { since: 5, source: 'api' as const } };
    const { record, messages } = writeOf(meta, previous, actor, 40, [released, plain, alone]);
    expect(record.handoff).toBeUndefined();
    expect(messages).toEqual([
      {
        id: 'r:5',
        conversationId: meta.conversationId,
        role: 'handoff',
        text: 'released',
        at: 10,
        data: { phase: 'released', by: 'agent', resolved: true, resolvedBy: ada },
      },
      { id: 'r:20', conversationId: meta.conversationId, role: 'handoff', text: 'released', at: 25, data: { phase: 'released', by: 'agent' } },
      {
        id: 'v:30',
        conversationId: meta.conversationId,
        role: 'handoff',
        text: 'resolved',
        at: 30,
        data: { phase: 'resolved', resolved: true, resolvedBy: bob },
      },
    ]);
    // A write whose answer was lost is recognised by this record too.
    expect(historyIdOf(alone.o)).toBe('v:30');
  });

  it('handoff.released (webhook) and the SDK frame carry resolved: true for a resolve only; a resolve with no handoff has neither', () => {
    expect(conversationEvent(meta, released)?.data).toMatchObject({ by: 'agent', agentId: 'ag_1', resolved: true });
    expect(conversationEvent(meta, plain)?.data).not.toHaveProperty('resolved');
    expect(conversationEvent(meta, alone)).toBeUndefined();
    expect(handoffNotice(meta, released)).toEqual({
      type: 'handoff',
      phase: 'released',
      by: 'agent',
      resolved: true,
      at: 10,
      conversationId: meta.conversationId,
      customerId: 'c1',
      channel: 'web',
      externalId: 'ext-1',
    });
    expect(handoffNotice(meta, plain)).not.toHaveProperty('resolved');
    expect(handoffNotice(meta, alone)).toBeUndefined();
  });
});
