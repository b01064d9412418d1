// Issue 19: the SDK side of human handoff over real sockets: onHandoff and onCustomerMessage on the SDK's WebSocket,
// and parley.conversations.* over HTTP, with a widget client as the customer.
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, ParleyApiError, type CustomerMessageNotice, type HandoffNotice } from '../../sdk/src/index.ts';
import { startParley, TEST_SECRET } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const until = async (check: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('human handoff from the SDK', () => {
  it('onHandoff and onCustomerMessage arrive live; conversations.reply, get, withHuman and release work; refusals are ParleyApiErrors', async () => {
    const p = await startParley();
    open.push(p);
    const handoffs: HandoffNotice[] = [];
    const messages: CustomerMessageNotice[] = [];
    const parley = createClient()
      .onHandoff((n) => void handoffs.push(n))
      .onCustomerMessage((n) => void messages.push(n));
    await parley.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(parley);

    const w = await startWidgetSession(p.url(), { customerId: 'cust-s', email: 'cust-s@example.com' });
    open.push(w);
    w.send({ type: 'message', id: 'm1', text: 'Please get me an agent' });
    await until(() => handoffs.length === 1);
    expect(handoffs[0]).toMatchObject({ conversationId: 'conv_web_cust-s', customerId: 'cust-s', channel: 'web', phase: 'requested', source: 'model' });
    expect(messages).toEqual([]); // the message that asked was answered by the handoff itself

    w.send({ type: 'message', id: 'm2', text: 'hello?' });
    await until(() => messages.length === 1);
    expect(messages[0]).toMatchObject({ conversationId: 'conv_web_cust-s', messageId: 'm2', text: 'hello?' });

    expect((await parley.conversations.withHuman()).items.map((c) => c.conversationId)).toEqual(['conv_web_cust-s']);
    const sent = await parley.conversations.reply('conv_web_cust-s', 'Hi, Sam here.', { name: 'Sam' });
    expect(await w.next((f) => f.type === 'message' && f.role === 'agent')).toMatchObject({ id: sent.id, author: { name: 'Sam' } });
    const view = await parley.conversations.get('conv_web_cust-s', { limit: 3 });
    expect(view.messages.map((m) => m.text)).toEqual(['hello?', 'joined', 'Hi, Sam here.']);
    expect(view.messages[1]).toMatchObject({ role: 'handoff', data: { phase: 'joined', agent: { name: 'Sam' } } });
    expect(view.nextBefore).toBe(view.messages[0].seq);
    const older = await parley.conversations.get('conv_web_cust-s', { before: view.nextBefore! });
    expect(older.messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'Please get me an agent'],
      ['handoff', 'requested'],
    ]);
    expect(older.nextBefore).toBeNull();

    expect(await parley.conversations.release('conv_web_cust-s')).toEqual({ conversationId: 'conv_web_cust-s', state: 'idle' });
    await until(() => handoffs.length === 2);
    expect(handoffs[1]).toMatchObject({ phase: 'released', by: 'agent' });
    const refused = await parley.conversations.reply('conv_web_cust-s', 'late', { name: 'Sam' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ParleyApiError);
    expect(refused).toMatchObject({ status: 409, code: 'not_handed_off' });
  });
});
