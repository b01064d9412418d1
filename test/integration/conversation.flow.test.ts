// Issue 3: the conversation runtime end to end over real sockets: the real
// SDK, the real openai client against a local OpenAI-compatible fake.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import type { StoreRepos } from '../../src/store/repos.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function backend(url: string, calls: { name: string; args: unknown; invocationId: string }[], opts: { slow?: boolean } = {}) {
  const client = createClient();
  client.expose(
    'getOrderStatus',
    { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }), mode: 'read' },
    async (args: { orderId: string }, ctx: { invocationId: string }) => {
      calls.push({ name: 'getOrderStatus', args, invocationId: ctx.invocationId });
      if (opts.slow) await new Promise((r) => setTimeout(r, 60_000));
      return { orderId: args.orderId, status: 'shipped', eta: '2026-11-25' };
    },
  );
  client.expose(
    'cancelOrder',
    { description: 'Cancel an order', parameters: z.object({ orderId: z.string() }), mode: 'write' },
    async (args: { orderId: string }, ctx: { invocationId: string }) => {
      calls.push({ name: 'cancelOrder', args, invocationId: ctx.invocationId });
      return { orderId: args.orderId, status: 'cancelled' };
    },
  );
  await client.listen({ url, secret: TEST_SECRET });
  open.push(client);
  return client;
}

async function widget(p: TestParley, customerId = 'cust-1'): Promise<WidgetClient> {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  await w.next((f) => f.type === 'ready');
  return w;
}

describe('conversations with the openai provider (real client, fake server)', () => {
  it('read tool → the answer is built from the tool result', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] }, { text: 'Order 1001 has shipped and arrives 2026-11-25.' });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' } } });
    open.push(p);
    const calls: { name: string; args: unknown; invocationId: string }[] = [];
    await backend(p.url(), calls);
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'what is the status of order 1001?' });
    await w.next((f) => f.type === 'ack' && f.id === 'm1');
    const reply = await w.next((f) => f.type === 'message');
    expect(reply.text).toContain('2026-11-25');
    expect(w.frames.filter((f) => f.type === 'typing').map((f) => f.on)).toEqual([true, false]);
    expect(calls).toEqual([{ name: 'getOrderStatus', args: { orderId: '1001' }, invocationId: expect.any(String) }]);
    // the second LLM request carried the tool result
    const second = llm.requests[1] as { messages: { role: string; content: string }[]; tools: unknown[] };
    expect(second.messages.some((m) => m.role === 'tool' && String(m.content).includes('shipped'))).toBe(true);
    // The SDK's two functions, and the built-in handoff (handoff.enabled, the default).
    expect(second.tools.map((t: any) => t.function.name).sort()).toEqual(['cancelOrder', 'getOrderStatus', 'handoff']);
    // the call and its result are in the stored history: the result as the exact text the LLM got
    const toolContent = second.messages.find((m) => m.role === 'tool')!.content;
    const tools = (await historyOf(p.services.store, 'conv_web_cust-1')).filter((r) => r.role === 'tool');
    expect(tools.map((r) => r.data)).toEqual([
      { phase: 'invoked', name: 'getOrderStatus', args: { orderId: '1001' } },
      { phase: 'result', name: 'getOrderStatus', ok: true, content: toolContent, durationMs: expect.any(Number) },
    ]);
  });

  it('write tool → confirm frame; approve runs the handler once, deny never runs it', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script(
      { toolCalls: [{ name: 'cancelOrder', args: { orderId: '1001' } }] },
      { text: 'Done: order 1001 is cancelled.' },
      { toolCalls: [{ name: 'cancelOrder', args: { orderId: '1002' } }] },
      { text: 'OK, I did not cancel order 1002.' },
    );
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' } } });
    open.push(p);
    const calls: { name: string; args: unknown; invocationId: string }[] = [];
    await backend(p.url(), calls);
    const w = await widget(p);

    w.send({ type: 'message', id: 'm1', text: 'cancel order 1001' });
    const confirm = await w.next((f) => f.type === 'confirm');
    expect(confirm).toMatchObject({ name: 'cancelOrder', args: { orderId: '1001' } });
    expect(confirm.summary).toContain('1001');
    expect(calls).toHaveLength(0);
    w.send({ type: 'confirm', id: confirm.id, approve: true });
    const done = await w.next((f) => f.type === 'message');
    expect(done.text).toContain('cancelled');
    expect(calls.filter((c) => c.name === 'cancelOrder')).toHaveLength(1);

    w.send({ type: 'message', id: 'm2', text: 'cancel order 1002' });
    const confirm2 = await w.next((f) => f.type === 'confirm');
    w.send({ type: 'confirm', id: confirm2.id, approve: false });
    const refused = await w.next((f) => f.type === 'message');
    expect(refused.text).toContain('did not cancel');
    expect(calls.filter((c) => c.name === 'cancelOrder')).toHaveLength(1);
    // the LLM was told about the refusal
    const last = llm.requests.at(-1) as { messages: { role: string; content: string }[] };
    expect(last.messages.some((m) => m.role === 'tool' && /declined/i.test(String(m.content)))).toBe(true);
  });

  it('two messages back to back → two answers, in order', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ text: 'first answer' }, { text: 'second answer' });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' } } });
    open.push(p);
    const w = await widget(p);
    w.send({ type: 'message', id: 'a', text: 'one' });
    w.send({ type: 'message', id: 'b', text: 'two' });
    const r1 = await w.next((f) => f.type === 'message');
    const r2 = await w.next((f) => f.type === 'message');
    expect([r1.text, r2.text]).toEqual(['first answer', 'second answer']);
    const userTexts = llm.requests.map(
      (r) => (r as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role === 'user').at(-1)?.content,
    );
    expect(userTexts).toEqual(['one', 'two']);
  });

  it('a message re-sent with the same client id is processed once', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ text: 'only once' }, { text: 'should not be used' });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' } } });
    open.push(p);
    const w = await widget(p);
    w.send({ type: 'message', id: 'dup', text: 'hello' });
    await w.next((f) => f.type === 'message');
    w.send({ type: 'message', id: 'dup', text: 'hello' });
    await w.next((f) => f.type === 'ack' && f.id === 'dup');
    await new Promise((r) => setTimeout(r, 300));
    expect(llm.requests).toHaveLength(1);
    expect(w.frames.filter((f) => f.type === 'message')).toHaveLength(1);
  });

  it('the same message sent twice back to back is stored once, recorded once, answered once', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ text: 'only once' }, { text: 'should not be used' });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' } } });
    open.push(p);
    const messageIn: unknown[] = [];
    p.services.telemetry.subscribe({ event: (e) => void (e.type === 'message.in' && messageIn.push(e)) });
    const w = await widget(p, 'cust-dup');
    w.send({ type: 'message', id: 'twice', text: 'hello' });
    w.send({ type: 'message', id: 'twice', text: 'hello' });
    await w.next((f) => f.type === 'message');
    await new Promise((r) => setTimeout(r, 300));
    const stored = await historyOf(p.services.store, 'conv_web_cust-dup');
    expect(stored.filter((r) => r.role === 'user')).toHaveLength(1);
    expect(messageIn).toHaveLength(1);
    expect(w.frames.filter((f) => f.type === 'ack' && f.id === 'twice')).toHaveLength(2);
    expect(w.frames.filter((f) => f.type === 'message')).toHaveLength(1);
    expect(llm.requests).toHaveLength(1);
  });

  it('events are stamped when they happen, not when they are committed: a turn starts before its LLM call', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ text: 'hello there' });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' } } });
    open.push(p);
    const w = await widget(p, 'cust-order');
    // A slow disk: every commit takes 50 ms more than the (instant) LLM answer.
    const store = p.services.store;
    const real = store.transaction.bind(store);
    store.transaction = <T>(fn: (tx: StoreRepos) => Promise<T>) => new Promise((r) => setTimeout(r, 50)).then(() => real(fn));
    // The conversation's own write (`conversations.persist`) too.
    const realPersist = store.conversations.persist;
    store.conversations.persist = (...args) => new Promise((r) => setTimeout(r, 50)).then(() => realPersist(...args));
    const seen: { kind: string; at: number }[] = [];
    p.services.telemetry.subscribe({
      event: (e) => void seen.push({ kind: e.type, at: e.at }),
      turnCall: (c) => void seen.push({ kind: 'turn-call', at: c.at }),
    });
    w.send({ type: 'message', id: 'm1', text: 'hi' });
    await w.next((f) => f.type === 'message');
    store.transaction = real;
    store.conversations.persist = realPersist;
    const at = (kind: string) => seen.find((x) => x.kind === kind)!.at;
    expect(at('message.in')).toBeLessThanOrEqual(at('turn.started'));
    expect(at('turn.started')).toBeLessThanOrEqual(at('turn-call'));
    expect(at('turn-call')).toBeLessThanOrEqual(at('message.out'));
  });

  it('SDK disconnected mid-invoke → the LLM is told it disconnected, and the customer hears back well before the invoke timeout', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] }, { text: 'Sorry, our order system is unreachable right now.' });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' }, safety: { invoke_timeout_ms: 10_000 } } });
    open.push(p);
    const calls: { name: string; args: unknown; invocationId: string }[] = [];
    const sdk = await backend(p.url(), calls, { slow: true });
    const w = await widget(p, 'cust-disc');
    w.send({ type: 'message', id: 'm1', text: 'status of 1001?' });
    while (calls.length === 0) await new Promise((r) => setTimeout(r, 20));
    const disconnected = Date.now();
    await sdk.close();
    const reply = await w.next((f) => f.type === 'message', 15_000);
    expect(Date.now() - disconnected).toBeLessThan(2000);
    expect(reply.text).toBe('Sorry, our order system is unreachable right now.');
    // What the LLM was given for the call: the disconnect, not a timeout.
    const tool = (llm.requests[1] as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === 'tool');
    expect(tool?.content).toMatch(/^Error \(disconnected\)/);
    const failed = (await historyOf(p.services.store, 'conv_web_cust-disc')).find((r) => r.role === 'tool' && r.data?.phase === 'failed');
    expect(failed?.data).toMatchObject({ name: 'getOrderStatus', ok: false, content: tool?.content });
  });
});

describe('the offline provider', () => {
  it('answers the order example with no network at all', async () => {
    const p = await startParley({ config: { llm: { provider: 'offline' } } });
    open.push(p);
    const calls: { name: string; args: unknown; invocationId: string }[] = [];
    await backend(p.url(), calls);
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'What is the status of order 1001?' });
    const reply = await w.next((f) => f.type === 'message');
    expect(reply.text).toContain('1001');
    expect(reply.text).toContain('shipped');
    expect(calls[0]).toMatchObject({ name: 'getOrderStatus', args: { orderId: '1001' } });
  });

  it('history comes back on the next ready, and the conversation survives a restart', async () => {
    const p = await startParley({ config: { llm: { provider: 'offline' } } });
    const calls: { name: string; args: unknown; invocationId: string }[] = [];
    const sdk = await backend(p.url(), calls);
    const w = await widget(p, 'cust-h');
    w.send({ type: 'message', id: 'm1', text: 'status of order 1001' });
    await w.next((f) => f.type === 'message');
    w.close();
    await sdk.close();
    await p.close();
    const again = await startParley({ storagePath: p.storagePath, config: { llm: { provider: 'offline' } } });
    open.push(again);
    const w2 = await connectWidget(again.url());
    open.push(w2);
    w2.send({ type: 'init', customerId: 'cust-h', email: 'cust-h@example.com' });
    const ready = await w2.next((f) => f.type === 'ready');
    expect(ready.history.map((h: { role: string }) => h.role)).toEqual(['user', 'assistant']);
    expect(ready.history[1].text).toContain('shipped');
  });
});
