// Issue 36, part 3: the built-in `search_knowledge` tool source on a real LMDB store and the real knowledge service:
// offered only while there are articles (and from the moment one is added), numbered results that run on across the
// searches of one turn, relevant hits only, bad arguments refused.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createKnowledge } from '../../src/knowledge/service.ts';
import { createKnowledgeTool, turnOfInvocation } from '../../src/knowledge/tool.ts';
import type { SearchToolResult } from '../../src/knowledge/results.ts';
import type { InvokeOutcome } from '../../src/services.ts';
import { openTestStore } from '../support/store.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const context = { customerId: 'c', conversationId: 'conv', channel: 'web' as const };
const results = (o: InvokeOutcome) => {
  if (!o.ok) throw new Error(o.error.message);
  return (o.data as SearchToolResult).results;
};

async function setup() {
  const store = await openTestStore();
  open.push(store);
  const clock = createManualClock(1_000_000);
  const knowledge = createKnowledge({ store: store.knowledge, clock });
  const tool = createKnowledgeTool({ knowledge, now: () => clock.now() });
  knowledge.onChange(() => void tool.refresh());
  return { knowledge, tool };
}

describe('the search_knowledge tool source', () => {
  it('is offered only while the knowledge base has articles, and says so when that changes', async () => {
    const { knowledge, tool } = await setup();
    await tool.refresh();
    expect(tool.catalog()).toEqual([]);
    let changes = 0;
    tool.onChange(() => changes++);
    await knowledge.upsert({ id: 'returns', title: 'Returns', body: '# Returns\n\nReturn any item within 30 days.', format: 'markdown' });
    await expect.poll(() => tool.catalog().map((t) => t.name), { timeout: 15_000 }).toEqual(['search_knowledge']);
    expect(tool.catalog()[0]).toMatchObject({ mode: 'read', visitors: true });
    expect(changes).toBe(1);
    await knowledge.remove('returns');
    await expect.poll(() => tool.catalog(), { timeout: 15_000 }).toEqual([]);
    expect(changes).toBe(2);
  });

  it('numbers run on across the searches of one turn; a chunk found again keeps its number; a new turn starts at 1', async () => {
    const { knowledge, tool } = await setup();
    await knowledge.upsert({ id: 'returns', title: 'Returns', body: '# Returns\n\nReturn any item within 30 days for a refund.', format: 'markdown' });
    await knowledge.upsert({ id: 'shipping', title: 'Shipping', body: '# Shipping\n\nDelivery takes 3 days; express delivery 1 day.', format: 'markdown' });
    await knowledge.upsert({ id: 'refunds', title: 'Refunds', body: '# Refunds\n\nA refund reaches your card in 5 days.', format: 'markdown' });
    const turn = 'conv:m1';
    expect(turnOfInvocation(`${turn}:0:call_1`)).toBe(turn);
    const first = results(await tool.invoke('search_knowledge', { query: 'express delivery' }, context, { invocationId: `${turn}:0:call_1` }));
    expect(first.map((r) => [r.n, r.chunk])).toEqual([[1, 'shipping#0']]);
    const second = results(await tool.invoke('search_knowledge', { query: 'refund delivery' }, context, { invocationId: `${turn}:1:call_2` }));
    const numbers = new Map(second.map((r) => [r.chunk, r.n]));
    expect(numbers.get('shipping#0')).toBe(1);
    expect([...numbers.entries()].filter(([c]) => c !== 'shipping#0').map(([, n]) => n)).toEqual([2, 3]);
    const other = results(await tool.invoke('search_knowledge', { query: 'refund' }, context, { invocationId: 'conv:m2:0:call_1' }));
    expect(other.map((r) => r.n)).toEqual(other.map((_, i) => i + 1));
    expect(other[0]).toMatchObject({ title: expect.any(String), text: expect.any(String), score: expect.any(Number) });
  });

  it('gives relevant hits only (none: the model is told to say it does not know); bad arguments are refused', async () => {
    const { knowledge, tool } = await setup();
    await knowledge.upsert({ id: 'returns', title: 'Returns', body: '# Returns\n\nReturn any item within 30 days for a refund.', format: 'markdown' });
    const none = await tool.invoke('search_knowledge', { query: 'what is the capital of France?' }, context, { invocationId: 'conv:m1:0:c' });
    expect(none).toMatchObject({ ok: true, data: { results: [], instructions: expect.stringMatching(/say you do not know/) } });
    expect(await tool.invoke('search_knowledge', { query: '  ' }, context, {})).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(await tool.invoke('search_knowledge', null, context, {})).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });
});
