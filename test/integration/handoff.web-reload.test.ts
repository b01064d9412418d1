// The handoff lines a customer saw live come back after a reload: `ready.handoffs` carries them (handed to a person,
// a person joined with their name, the assistant back), each placed after the history entry it followed and with the
// id its live `status` frame had. Real sockets, the agent API over HTTP, the offline LLM (it hands over when asked
// for a person); runs on LMDB and on PostgreSQL (the engine is the vitest project's).
import { afterEach, describe, expect, it } from 'vitest';
import { WidgetReadyFrame } from '../../sdk/src/widget-protocol.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function api(p: TestParley, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${TEST_SECRET}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${p.url()}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

async function widget(p: TestParley, customerId: string): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return w;
}

const readyOf = (w: WidgetClient) => WidgetReadyFrame.parse(w.frames.find((f) => f.type === 'ready'));

describe('handoff lines in the ready history', () => {
  it('handed over, Ada joined, back to the assistant: after a reload, in order, with the live lines’ ids', async () => {
    const p = await startParley();
    open.push(p);
    const w = await widget(p, 'cust-r1');
    w.send({ type: 'message', id: 'm1', text: 'I want to talk to a person' });
    const requested = await w.next((f) => f.type === 'status' && f.mode === 'human');
    const id = 'conv_web_cust-r1';

    // Waiting for a person: the line is there already, and `status` says who has it.
    const waiting = readyOf(await widget(p, 'cust-r1'));
    expect(waiting.status).toEqual({ mode: 'human' });
    expect(waiting.handoffs).toEqual([{ id: requested.id, mode: 'human', at: expect.any(Number), after: 'm1' }]);

    const sent = await api(p, 'POST', `/conversations/${id}/messages`, { text: 'Hi, Ada here.', author: { name: 'Ada' } });
    expect(sent.status).toBe(201);
    const joined = await w.next((f) => f.type === 'status' && f.agent?.name === 'Ada');
    expect((await api(p, 'POST', `/conversations/${id}/release`)).status).toBe(200);
    const back = await w.next((f) => f.type === 'status' && f.mode === 'assistant');
    w.send({ type: 'message', id: 'm2', text: 'Thanks!' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant');

    const ready = readyOf(await widget(p, 'cust-r1'));
    expect(ready.status).toBeUndefined();
    const answer = ready.history.find((h) => h.role === 'assistant')!;
    expect(ready.history.map((h) => [h.id, h.role])).toEqual([
      ['m1', 'user'],
      [sent.body.id, 'agent'],
      ['m2', 'user'],
      [answer.id, 'assistant'],
    ]);
    expect(ready.handoffs).toEqual([
      { id: requested.id, mode: 'human', at: expect.any(Number), after: 'm1' },
      { id: joined.id, mode: 'human', agent: { name: 'Ada' }, at: expect.any(Number), after: 'm1' },
      { id: back.id, mode: 'assistant', at: expect.any(Number), after: sent.body.id },
    ]);
    expect(new Set([requested.id, joined.id, back.id]).size).toBe(3);
  });

  it('a conversation never handed over has no handoff lines', async () => {
    const p = await startParley();
    open.push(p);
    const w = await widget(p, 'cust-r2');
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant');
    const ready = readyOf(await widget(p, 'cust-r2'));
    expect(ready.history.length).toBe(2);
    expect(ready.handoffs).toBeUndefined();
  });
});
