// The offline LLM and the built-in handoff tool (issue 19): asked for a person, it calls `handoff`; otherwise the tool
// is neither chosen nor offered in its help text.
import { describe, expect, it } from 'vitest';
import { HANDOFF_TOOL } from '../../src/conversations/llm-step.ts';
import { createOfflineProvider } from '../../src/llm/offline.ts';
import type { ToolSpec } from '../../src/llm/types.ts';

const order: ToolSpec = {
  name: 'getOrderStatus',
  description: 'Get the status of an order',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } } },
};
const ask = (text: string, tools: ToolSpec[]) => createOfflineProvider().complete({ messages: [{ role: 'user', content: text }], tools, purpose: 'chat' });

describe('offline LLM: handoff', () => {
  it.each(['I want to talk to a person', 'Can I speak to a human?', 'agent please', 'OPERATOR', 'get me a representative'])('%s → handoff', async (text) => {
    const r = await ask(text, [order, HANDOFF_TOOL]);
    expect(r.toolCalls).toEqual([{ id: expect.any(String), name: 'handoff', args: { reason: 'The customer asked for a person' } }]);
  });

  it('without the tool offered (handoff.enabled false) it answers instead; other messages never pick it', async () => {
    expect((await ask('I want to talk to a person', [order])).toolCalls).toEqual([]);
    expect((await ask('what is the status of order 1001?', [order, HANDOFF_TOOL])).toolCalls.map((c) => c.name)).toEqual(['getOrderStatus']);
    const help = await ask('hello', [order, HANDOFF_TOOL]);
    expect(help.text).toBe('I can help you get the status of an order. What would you like to do?');
  });
});
