// Issue 20: replies stream to the widget as the model writes them. A real
// Parley, the real `openai` client against the SSE fake, widgets over real
// sockets.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { WidgetDeltaFrame } from '../../sdk/src/widget-protocol.ts';
import { startFakeOpenAi, type FakeOpenAi, type ScriptStep } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';
import { until } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function setup(llmConfig: Record<string, unknown> = {}, ...script: ScriptStep[]): Promise<{ llm: FakeOpenAi; p: TestParley }> {
  const llm = await startFakeOpenAi();
  open.push(llm);
  llm.script(...script);
  const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', max_retries: 0, ...llmConfig } } });
  open.push(p);
  return { llm, p };
}

async function widget(p: TestParley, customerId = 'stream-1'): Promise<WidgetClient> {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  await w.next((f) => f.type === 'ready');
  return w;
}

/** The frames of one reply up to and including its final message. */
async function replyFrames(w: WidgetClient, timeoutMs = 10_000) {
  const message = await w.next((f) => f.type === 'message', timeoutMs);
  const upTo = w.frames.indexOf(message);
  const deltas = w.frames.slice(0, upTo).filter((f) => f.type === 'delta');
  return { message, deltas };
}

/** What a widget shows after these deltas (a reset empties the bubble first). */
const shown = (deltas: Record<string, any>[]) => deltas.reduce((text: string, d) => (d.reset ? '' : text) + d.text, '');

describe('streamed replies on the web', () => {
  it('deltas under the reply id, then the whole message; the deltas joined are its text; only the message is stored; usage and model recorded', async () => {
    const text = 'Your order 1001 left our warehouse this morning and should arrive on Thursday.';
    const { p } = await setup({}, { text, model: 'fake-1-0613', chunkDelayMs: 10 });
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'where is my order?' });
    const { message, deltas } = await replyFrames(w);
    expect(message.text).toBe(text);
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.every((d) => d.id === message.id && !d.reset)).toBe(true);
    expect(deltas.map((d) => d.text).join('')).toBe(message.text);
    for (const d of deltas) expect(WidgetDeltaFrame.safeParse(d).success).toBe(true);
    // typing on first; the deltas come after it
    const typingOn = w.frames.findIndex((f) => f.type === 'typing' && f.on);
    expect(typingOn).toBeGreaterThanOrEqual(0);
    expect(w.frames.indexOf(deltas[0])).toBeGreaterThan(typingOn);

    // The store has the customer message and the whole reply, nothing of the pieces.
    await p.runtime.host.settle();
    const records = await historyOf(p.services.store, 'conv_web_stream-1');
    expect(records.map((r) => [r.role, r.text])).toEqual([
      ['user', 'where is my order?'],
      ['assistant', text],
    ]);

    // The turn-call has the usage from the stream's last chunk and the model the chunks named.
    await p.services.telemetry.flush();
    const r = await fetch(`${p.url()}/api/v1/telemetry/turn-calls?conversationId=conv_web_stream-1`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    const { items } = (await r.json()) as { items: Record<string, unknown>[] };
    expect(items).toEqual([expect.objectContaining({ ok: true, provider: 'openai', model: 'fake-1-0613', promptTokens: 22, completionTokens: 7 })]);
  });

  it('text the model writes before a tool call is taken back (a reset) before the answer is written', async () => {
    const { p } = await setup(
      {},
      { text: 'Let me look that up for you.', toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }], argumentPieces: 4 },
      { text: 'Order 1001 has shipped.' },
    );
    const sdk = createClient();
    sdk.expose('getOrderStatus', { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) }, async ({ orderId }) => ({
      orderId,
      status: 'shipped',
    }));
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'status of 1001?' });
    const { message, deltas } = await replyFrames(w);
    expect(message.text).toBe('Order 1001 has shipped.');
    const resets = deltas.filter((d) => d.reset);
    expect(resets).toEqual([{ type: 'delta', id: message.id, text: '', reset: true }]);
    const reset = deltas.indexOf(resets[0]);
    expect(shown(deltas.slice(0, reset))).toBe('Let me look that up for you.');
    expect(deltas.slice(reset + 1).length).toBeGreaterThanOrEqual(2);
    expect(shown(deltas)).toBe(message.text);
  });

  it('a stream that fails half-way is retried: a reset takes back its text, the retry writes from the start, one message', async () => {
    const { llm, p } = await setup(
      { max_retries: 1 },
      { text: 'Your refund of 20 euros was', chunkDelayMs: 5, cutAfterChunks: 3 },
      { text: 'Your refund of 25 euros is on its way.', chunkDelayMs: 5 },
    );
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'my refund?' });
    const { message, deltas } = await replyFrames(w);
    expect(llm.requests).toHaveLength(2);
    expect(message.text).toBe('Your refund of 25 euros is on its way.');
    const reset = deltas.findIndex((d) => d.reset);
    expect(shown(deltas.slice(0, reset))).toBe('Your refund of');
    expect(deltas[reset]).toMatchObject({ text: '', reset: true });
    // after the reset, exactly the retry's text: never the first attempt's beginning followed by the second's
    expect(
      deltas
        .slice(reset + 1)
        .map((d) => d.text)
        .join(''),
    ).toBe(message.text);
    expect(deltas.filter((d) => d.reset)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(w.frames.filter((f) => f.type === 'message')).toHaveLength(1);
  });

  it('a stream that fails half-way with no retries left falls back: the fallback reply replaces the broken one', async () => {
    const { p } = await setup({ fallback: { provider: 'offline' } }, { text: 'Half of a sentence that never', cutAfterChunks: 4 });
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    const { message, deltas } = await replyFrames(w);
    const reset = deltas.findIndex((d) => d.reset);
    expect(reset).toBeGreaterThan(0);
    expect(shown(deltas.slice(0, reset))).toBe('Half of a sentence');
    expect(message.text).toMatch(/^Hi! I'm the support assistant/);
    expect(shown(deltas)).toBe(message.text);
    expect(deltas.slice(reset + 1).length).toBeGreaterThanOrEqual(2);
  });

  it('a widget that connects mid-reply is caught up with the text so far, then gets the rest and the final message', async () => {
    const text = 'one two three four five six seven eight nine ten eleven twelve';
    const { p } = await setup({}, { text, chunkDelayMs: 60 });
    const first = await widget(p);
    first.send({ type: 'message', id: 'm1', text: 'count for me' });
    await first.next((f) => f.type === 'delta');
    await first.next((f) => f.type === 'delta');
    await first.next((f) => f.type === 'delta');
    const late = await widget(p);
    const caughtUp = late.frames.find((f) => f.type === 'delta')!;
    expect(late.frames.indexOf(caughtUp)).toBe(1); // right after ready
    expect(caughtUp).toMatchObject({ reset: true });
    expect(caughtUp.text.split(' ').length).toBeGreaterThanOrEqual(3);
    expect(text.startsWith(caughtUp.text)).toBe(true);
    const { message, deltas } = await replyFrames(late);
    expect(message.text).toBe(text);
    expect(shown(deltas)).toBe(text);
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect((await replyFrames(first)).message.text).toBe(text);
    // once the reply is final, nothing is being written: a new widget is not caught up with anything
    const after = await widget(p);
    await new Promise((r) => setTimeout(r, 100));
    expect(after.frames.map((f) => f.type)).toEqual(['ready']);
  });

  it('a widget that disconnects mid-stream: the others get every delta, the reply is stored once and shown on the next connect', async () => {
    const text = 'alpha beta gamma delta epsilon zeta eta theta';
    const { p } = await setup({}, { text, chunkDelayMs: 40 });
    const leaving = await widget(p);
    const staying = await widget(p);
    leaving.send({ type: 'message', id: 'm1', text: 'greek letters please' });
    await leaving.next((f) => f.type === 'delta');
    await leaving.next((f) => f.type === 'delta');
    leaving.socket.terminate();
    const { message, deltas } = await replyFrames(staying);
    expect(message.text).toBe(text);
    expect(shown(deltas)).toBe(text);
    await p.runtime.host.settle();
    const back = await widget(p);
    const ready = back.frames[0];
    expect(ready.history.map((h: { role: string; text: string }) => `${h.role}:${h.text}`)).toEqual(['user:greek letters please', `assistant:${text}`]);
    expect(back.frames.some((f) => f.type === 'delta')).toBe(false);
    // and the next turn streams as usual
    staying.send({ type: 'message', id: 'm2', text: 'again' });
    const again = await replyFrames(back);
    expect(again.deltas.length).toBeGreaterThanOrEqual(1);
    expect(again.message.text).toBe('OK.');
    await until(
      async () => (await historyOf(p.services.store, 'conv_web_stream-1')).length,
      (n) => n === 4,
    );
  });
});
