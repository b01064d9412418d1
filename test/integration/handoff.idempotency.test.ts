// Issue 34, part 6: an agent message with an idempotency key (`Idempotency-Key` header or a client `id`) is stored and
// shown once however often it is posted, the retry answered as the first post was. Real server, store, widget socket.
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/src/index.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function post(p: TestParley, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${p.url()}${path}`, {
    method: 'POST',
    headers: Object.assign({ authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' }, headers),
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('agent messages with an idempotency key', () => {
  it('a retried POST …/messages (header, body id, concurrent, SDK) is stored and shown once, with the same response', async () => {
    const p = await startParley();
    open.push(p);
    const w = await startWidgetSession(p.url(), { customerId: 'cust-i', email: 'cust-i@example.com' });
    open.push(w);
    const conversationId = 'conv_web_cust-i';
    const path = `/conversations/${conversationId}/messages`;
    w.send({ type: 'message', id: 'm1', text: 'I want to talk to a person' });
    await w.next((f) => f.type === 'status' && f.mode === 'human');
    const author = { name: 'Alex' };

    const first = await post(p, path, { text: 'one', author }, { 'idempotency-key': 'k-1' });
    expect(first.status).toBe(201);
    const retry = await post(p, path, { text: 'one', author }, { 'idempotency-key': 'k-1' });
    expect(retry).toEqual(first);

    const byId = await post(p, path, { text: 'two', author, id: 'k-2' });
    expect(await post(p, path, { text: 'two', author, id: 'k-2' })).toEqual(byId);
    expect(await post(p, path, { text: 'two', author }, { 'idempotency-key': 'k-2' })).toEqual(byId);

    const [c1, c2] = await Promise.all([post(p, path, { text: 'three', author, id: 'k-3' }), post(p, path, { text: 'three', author, id: 'k-3' })]);
    expect(c1.status).toBe(201);
    expect(c2.body.id).toBe(c1.body.id);

    const parley = createClient();
    await parley.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(parley);
    const s1 = await parley.conversations.reply(conversationId, 'four', author, { idempotencyKey: 'k-4' });
    expect(await parley.conversations.reply(conversationId, 'four', author, { idempotencyKey: 'k-4' })).toEqual(s1);

    // Without a key, two posts are two messages.
    await post(p, path, { text: 'five', author });
    await post(p, path, { text: 'five', author });

    expect(await post(p, path, { text: 'x', author, id: 'a' }, { 'idempotency-key': 'b' })).toMatchObject({
      status: 400,
      body: { error: { code: 'validation_failed' } },
    });
    expect(await post(p, path, { text: 'x', author }, { 'idempotency-key': 'has space' })).toMatchObject({
      status: 400,
      body: { error: { code: 'validation_failed' } },
    });

    const stored = (await historyOf(p.services.store, conversationId)).filter((r) => r.role === 'agent').map((r) => r.text);
    expect(stored).toEqual(['one', 'two', 'three', 'four', 'five', 'five']);
    await w.next((f) => f.type === 'message' && f.role === 'agent' && f.text === 'five' && w.frames.filter((g) => g.text === 'five').length === 2);
    expect(w.frames.filter((f) => f.type === 'message' && f.role === 'agent').map((f) => f.text)).toEqual(['one', 'two', 'three', 'four', 'five', 'five']);
  });
});
