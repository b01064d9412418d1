// Issue 33 part 2: a burst is one turn. Customer lines sent while a turn runs are answered together by the next turn
// (the model sees them all, in order, after the reply it just gave), each one still stored and acknowledged on its
// own; on WhatsApp the gathering window (1.5 s by default) makes a quick burst start one turn.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { whatsappParley } from '../support/whatsapp-parley.ts';
import { postWebhook, sleep, textMessage, until, webhookBody } from '../support/whatsapp.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

type ChatMessage = { role: string; content: string | null };

describe('a burst is one turn', () => {
  it('widget: five lines sent while a turn runs get one reply, which sees them all in order', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ text: 'first answer', delayMs: 1_500 });
    llm.fallback((body: { messages: ChatMessage[] }) => ({
      text: `got ${body.messages.filter((m) => m.role === 'user').length} lines`,
    }));
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' }, conversation: { bursts: true } } });
    open.push(p);
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'burst-1', email: 'b@example.com' });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'm1', text: 'order 1002' });
    await w.next((f) => f.type === 'ack' && f.id === 'm1');
    await until(
      () => llm.requests.length,
      (n) => n === 1,
      15_000,
    );
    const lines = ['new address is 12 Main St', 'apartment 4', 'and can you cancel 1001', 'please', 'thanks!'];
    lines.forEach((text, i) => w.send({ type: 'message', id: `m${i + 2}`, text }));
    for (let i = 2; i <= 6; i++) await w.next((f) => f.type === 'ack' && f.id === `m${i}`, 15_000);
    await w.next((f) => f.type === 'message' && f.role === 'assistant' && f.text === 'got 6 lines', 20_000);
    // Nothing more comes: one reply for the burst, not one per line.
    await sleep(1_000);
    expect(w.frames.filter((f) => f.type === 'message' && f.role === 'assistant').map((f) => f.text)).toEqual(['first answer', 'got 6 lines']);
    expect(llm.requests).toHaveLength(2);
    const seen = (llm.requests[1].messages as ChatMessage[]).filter((m) => m.role !== 'system').map((m) => m.content);
    expect(seen).toEqual(['order 1002', 'first answer', ...lines]);

    // Each line is stored once; the one reply names every line it answers.
    const history = await historyOf(p.services.store, 'conv_web_burst-1');
    expect(history.filter((r) => r.role === 'user').map((r) => r.id)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    const replies = history.filter((r) => r.role === 'assistant');
    expect(replies.map((r) => [r.id, r.data?.answers])).toEqual([
      ['conv_web_burst-1:m1:r', undefined],
      ['conv_web_burst-1:m2:r', ['m2', 'm3', 'm4', 'm5', 'm6']],
    ]);
  }, 60_000);

  it('WhatsApp: four messages sent within the gathering window get one reply', async () => {
    const { graph, p } = await whatsappParley(open, { bursts: true });
    const from = '+15554440001';
    const texts = ['hi', 'my order is 1001', 'it has not arrived', 'can you check?'];
    for (const [i, text] of texts.entries()) {
      const res = await postWebhook(p.url(), webhookBody([textMessage(from, text, `wamid.burst.${i}`)]));
      expect(res.status).toBe(200);
    }
    const toCustomer = () => graph.delivered().filter((r) => r.body.to === from.replace('+', '') || r.body.to === from);
    await until(
      () => toCustomer().length,
      (n) => n >= 1,
      15_000,
    );
    // Well past another window: still one reply.
    await sleep(3_000);
    expect(toCustomer()).toHaveLength(1);
    expect(toCustomer()[0].body.biz_opaque_callback_data).toMatch(/:wa:wamid\.burst\.0:r$/);
  }, 60_000);
});
