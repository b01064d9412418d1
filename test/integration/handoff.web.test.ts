// Issue 19: human handoff on the web channel, over real sockets: the widget protocol client, the agent API over HTTP,
// a real LMDB, the offline LLM (deterministic: it hands over when asked for a person) and the real openai client
// against the local fake (what the model is given after the release).
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const auth = { authorization: `Bearer ${TEST_SECRET}` };

async function api(p: TestParley, method: string, path: string, body?: unknown, headers: Record<string, string> = auth) {
  const res = await fetch(`${p.url()}${path}`, {
    method,
    headers: body === undefined ? headers : Object.assign({ 'content-type': 'application/json' }, headers),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function widget(p: TestParley, customerId = 'cust-1'): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return w;
}

async function say(w: WidgetClient, id: string, text: string) {
  w.send({ type: 'message', id, text });
  await w.next((f) => f.type === 'ack' && f.id === id);
}

describe('human handoff on the web', () => {
  it('asking for a person hands over; agent replies reach the widget with the name; customer messages are not answered; release brings the assistant back', async () => {
    const p = await startParley();
    open.push(p);
    const w = await widget(p);
    await say(w, 'm1', 'I want to talk to a person');
    expect(await w.next((f) => f.type === 'status')).toMatchObject({ type: 'status', mode: 'human' });
    const conversationId = 'conv_web_cust-1';

    const inbox = await api(p, 'GET', '/conversations?state=withHuman');
    expect(inbox.status).toBe(200);
    expect(inbox.body.items).toEqual([
      expect.objectContaining({
        conversationId,
        channel: 'web',
        state: 'withHuman',
        customerId: 'cust-1',
        handoff: expect.objectContaining({ source: 'model' }),
      }),
    ]);

    const sent = await api(p, 'POST', `/conversations/${conversationId}/messages`, { text: 'Hi, Alex here. How can I help?', author: { name: 'Alex' } });
    expect(sent.status).toBe(201);
    expect(await w.next((f) => f.type === 'status')).toMatchObject({ mode: 'human', agent: { name: 'Alex' } });
    expect(await w.next((f) => f.type === 'message')).toMatchObject({
      id: sent.body.id,
      role: 'agent',
      text: 'Hi, Alex here. How can I help?',
      author: { name: 'Alex' },
    });

    await say(w, 'm2', 'My parcel never arrived');
    const read = await api(p, 'GET', `/conversations/${conversationId}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ conversationId, channel: 'web', state: 'withHuman', customer: { customerId: 'cust-1', email: 'cust-1@example.com' } });
    expect(read.body.messages.map((m: any) => [m.role, m.text])).toEqual([
      ['user', 'I want to talk to a person'],
      ['handoff', 'requested'],
      ['handoff', 'joined'],
      ['agent', 'Hi, Alex here. How can I help?'],
      ['user', 'My parcel never arrived'],
    ]);
    // Nothing from the model while the person has it.
    await new Promise((r) => setTimeout(r, 200));
    expect(w.frames.filter((f) => f.type === 'message' && f.role === 'assistant')).toEqual([]);

    // A reload shows the agent's message with its name and the mode.
    const again = await widget(p);
    const ready = again.frames.find((f) => f.type === 'ready')!;
    expect(ready.status).toEqual({ mode: 'human', agent: { name: 'Alex' } });
    expect(ready.history.find((h: any) => h.role === 'agent')).toMatchObject({ text: 'Hi, Alex here. How can I help?', author: { name: 'Alex' } });

    const released = await api(p, 'POST', `/conversations/${conversationId}/release`);
    expect(released).toEqual({ status: 200, body: { conversationId, state: 'idle' } });
    expect(await w.next((f) => f.type === 'status')).toMatchObject({ mode: 'assistant' });
    expect((await api(p, 'GET', '/conversations?state=withHuman')).body.items).toEqual([]);
    await say(w, 'm3', 'hello again');
    expect(await w.next((f) => f.type === 'message')).toMatchObject({ role: 'assistant' });
  });

  it('the integrator hands over; refusals: unknown conversation 404, not handed over 409, bad bodies 400, no secret 401', async () => {
    const p = await startParley();
    open.push(p);
    const w = await widget(p, 'cust-2');
    await say(w, 'm1', 'hello');
    await w.next((f) => f.type === 'message' && f.role === 'assistant');
    const id = 'conv_web_cust-2';

    expect((await api(p, 'POST', `/conversations/${id}/messages`, { text: 'hi', author: { name: 'Alex' } })).body.error.code).toBe('not_handed_off');
    expect((await api(p, 'POST', `/conversations/${id}/release`)).status).toBe(409);
    expect((await api(p, 'POST', '/conversations/conv_web_nobody/handoff', {})).body).toEqual({
      error: { code: 'conversation_not_found', message: 'No conversation with this id' },
    });
    expect((await api(p, 'POST', `/conversations/${id}/handoff`, {}, {})).status).toBe(401);
    expect((await api(p, 'GET', `/conversations/${id}`, undefined, { authorization: 'Bearer wrong-secret-0123456789' })).status).toBe(401);
    expect((await api(p, 'GET', '/conversations?state=idle')).status).toBe(400);

    const handed = await api(p, 'POST', `/conversations/${id}/handoff`, { reason: 'VIP customer' });
    expect(handed).toEqual({ status: 200, body: { conversationId: id, state: 'withHuman' } });
    expect(await w.next((f) => f.type === 'status')).toMatchObject({ mode: 'human' });
    const bad = await api(p, 'POST', `/conversations/${id}/messages`, { text: '', author: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
    expect(bad.body.error.message).toMatch(/body\.text/);
    expect(bad.body.error.message).toMatch(/body\.author\.name/);
    const list = await api(p, 'GET', '/conversations?state=withHuman');
    expect(list.body.items[0].handoff).toMatchObject({ source: 'api', reason: 'VIP customer' });
  });

  it('after the release, the model is given what happened: the handoff, the agent’s words and the release', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ toolCalls: [{ name: 'handoff', args: { reason: 'wants a human' } }] }, { text: 'Glad Alex could help!' });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' } } });
    open.push(p);
    const w = await widget(p, 'cust-3');
    await say(w, 'm1', 'get me a human');
    await w.next((f) => f.type === 'status' && f.mode === 'human');
    expect(llm.requests[0].tools.map((t: any) => t.function.name)).toContain('handoff');
    const id = 'conv_web_cust-3';
    await api(p, 'POST', `/conversations/${id}/messages`, { text: 'Your refund is on its way.', author: { name: 'Alex' } });
    await api(p, 'POST', `/conversations/${id}/release`);
    await say(w, 'm2', 'thanks!');
    expect(await w.next((f) => f.type === 'message' && f.role === 'assistant')).toMatchObject({ text: 'Glad Alex could help!' });
    expect(llm.requests).toHaveLength(2);
    const said = JSON.stringify(llm.requests[1].messages);
    expect(said).toContain('handed over to a person');
    expect(said).toContain('wants a human');
    expect(said).toContain('Alex, a person from the support team, wrote:] Your refund is on its way.');
    expect(said).toContain('released the conversation');
  });
});
