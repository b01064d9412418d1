// Issue 3 part 6: the LLM gets the last `session.history_window` customer and assistant messages —
// tool records (stored between them) are not part of it, a proactive message sent between turns
// is, the current turn's own message comes once (in its transcript), and passivation changes nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

type Req = { messages: { role: string; content: string | null }[] };
const conversation = (r: Req) => r.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}:${m.content ?? ''}`);

describe('the history the LLM is given', () => {
  it('is the last history_window customer/assistant messages, proactive ones included, tool records and the current turn excluded', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] }, { text: 'A1' });
    llm.fallback((body: Req) => ({ text: `A-${body.messages.at(-1)?.content}` }));
    const p = await startParley({
      config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' }, session: { history_window: 3 }, proactive: { enabled: true } },
    });
    open.push(p);
    const sdk = createClient();
    sdk.expose(
      'getOrderStatus',
      { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
      async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }),
    );
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);

    const w = await startWidgetSession(p.url(), { customerId: 'hw-1', email: 'hw-1@example.com' });
    open.push(w);
    const ask = async (id: string, text: string) => {
      w.send({ type: 'message', id, text });
      return (await w.next((f) => f.type === 'message' && f.role === 'assistant' && !f.proactive)).text;
    };

    expect(await ask('m1', 'u1')).toBe('A1');
    const headers = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
    await fetch(`${p.url()}/proactive/opt-in`, { method: 'POST', headers, body: JSON.stringify({ customerExternalId: 'anon:hw-1', optIn: true }) });
    const sent = await (
      await fetch(`${p.url()}/proactive`, { method: 'POST', headers, body: JSON.stringify({ customerExternalId: 'anon:hw-1', channel: 'web', content: 'P' }) })
    ).json();
    expect(sent.accepted).toBe(true);
    expect(await ask('m2', 'u2')).toBe('A-u2');
    expect(await ask('m3', 'u3')).toBe('A-u3');

    // Turn 1 made two LLM requests (tool call, then answer); m2 and m3 one each.
    const [, afterTool, forM2, forM3] = llm.requests as Req[];
    // The turn's second step (after its tool call): its own message is stored by now, and still comes once.
    expect(conversation(afterTool).filter((m) => m === 'user:u1')).toHaveLength(1);
    expect(conversation(afterTool)[0]).toBe('user:u1');
    expect(conversation(forM2)).toEqual(['user:u1', 'assistant:A1', 'assistant:P', 'user:u2']);
    expect(conversation(forM3)).toEqual(['assistant:P', 'user:u2', 'assistant:A-u2', 'user:u3']);

    // Passivated and activated again: the window is read from the store and is the same.
    await p.runtime.host.passivate(['conv_web_hw-1']);
    expect(p.runtime.host.activeCount()).toBe(0);
    expect(await ask('m4', 'u4')).toBe('A-u4');
    expect(conversation((llm.requests as Req[]).at(-1)!)).toEqual(['assistant:A-u2', 'user:u3', 'assistant:A-u3', 'user:u4']);
    expect(await ask('m5', 'u5')).toBe('A-u5');
    expect(conversation((llm.requests as Req[]).at(-1)!)).toEqual(['assistant:A-u3', 'user:u4', 'assistant:A-u4', 'user:u5']);
  });
});
