// Issue 34, part 6: a handoff while a write confirmation waits cancels it and hands over at once. Over real sockets:
// the widget protocol client as the customer, the real SDK as the backend (its own call log is the proof the write
// never ran) and as the agent (parley.conversations.*), the real openai client against the local fake, the real store.
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

describe('handoff while a confirmation waits', () => {
  it('the card turns into "cancelled", the agent replies at once, a late approve is refused and the write never runs', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ toolCalls: [{ name: 'cancelOrder', args: { orderId: '1001' } }] });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' } } });
    open.push(p);
    const calls: unknown[] = [];
    const parley = createClient();
    parley.expose(
      'cancelOrder',
      { description: 'Cancel an order', parameters: z.object({ orderId: z.string() }), mode: 'write' },
      async (args: { orderId: string }) => {
        calls.push(args);
        return { orderId: args.orderId, status: 'cancelled' };
      },
    );
    await parley.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(parley);
    const w = await startWidgetSession(p.url(), { customerId: 'cust-c', email: 'cust-c@example.com' });
    open.push(w);
    const conversationId = 'conv_web_cust-c';

    w.send({ type: 'message', id: 'm1', text: 'cancel order 1001' });
    const confirm = await w.next((f) => f.type === 'confirm');

    expect(await parley.conversations.handoff(conversationId, 'the customer called')).toEqual({ conversationId, state: 'withHuman' });
    expect(await w.next((f) => f.type === 'confirmation')).toMatchObject({ id: confirm.id, outcome: 'cancelled', reason: 'handoff' });
    expect(await w.next((f) => f.type === 'status')).toMatchObject({ mode: 'human' });
    // The agent is not refused (409) while the old confirmation would have waited 300 s.
    const sent = await parley.conversations.reply(conversationId, 'Hi, Alex here.', { name: 'Alex' });
    expect(await w.next((f) => f.type === 'message' && f.role === 'agent')).toMatchObject({ id: sent.id, text: 'Hi, Alex here.' });

    w.send({ type: 'confirm', id: confirm.id, approve: true });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'unknown_confirmation' });
    // A reload shows the receipt as cancelled.
    const again = await startWidgetSession(p.url(), { customerId: 'cust-c', email: 'cust-c@example.com' });
    open.push(again);
    const ready = again.frames.find((f) => f.type === 'ready')!;
    expect(ready.history.filter((h: { role: string }) => h.role === 'confirmation')).toEqual([
      expect.objectContaining({ id: confirm.id, outcome: 'cancelled' }),
    ]);
    expect((await parley.conversations.get(conversationId)).state).toBe('withHuman');
    // The backend's own log: the write never ran.
    expect(calls).toEqual([]);
    expect(llm.requests).toHaveLength(1);
  });
});
