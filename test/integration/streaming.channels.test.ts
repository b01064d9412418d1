// Issue 20: a reply the model streams in many chunks leaves WhatsApp (Graph API
// and the SDK's onSend) whole, once, after it is final.
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/src/index.ts';
import { startFakeGraph } from '../support/fake-graph.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET } from '../support/parley.ts';
import { postWebhook, sleep, textMessage, until, WA, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const TEXT = 'Thanks for waiting! Your parcel is with the courier and will be delivered tomorrow between 9 and 12.';

async function streamingModel() {
  const llm = await startFakeOpenAi();
  open.push(llm);
  llm.fallback({ text: TEXT, chunkDelayMs: 15 });
  return llm;
}

describe('streamed replies on WhatsApp stay whole', () => {
  it('Graph API: exactly one message, the whole reply', async () => {
    const llm = await streamingModel();
    const graph = await startFakeGraph();
    open.push(graph);
    const p = await startParley({
      config: {
        llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' },
        channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA } },
      },
    });
    open.push(p);
    expect((await postWebhook(p.url(), webhookBody([textMessage('+15550301234', 'where is my parcel?')]))).status).toBe(200);
    const sent = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    await sleep(500);
    expect(graph.delivered()).toHaveLength(1);
    expect(sent[0].body).toMatchObject({ to: '15550301234', type: 'text', text: { body: TEXT } });
    expect(llm.requests[0].stream).toBe(true);
  });

  it('provider sdk: onSend is called once, with the whole reply', async () => {
    const llm = await streamingModel();
    const p = await startParley({
      config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' }, channels: { whatsapp: { enabled: true, provider: 'sdk' } } },
    });
    open.push(p);
    const sends: { to: string; content: string }[] = [];
    const sdk = createClient();
    sdk.onSend(async (m: { to: string; content: string }) => {
      sends.push(m);
      return { messageId: `own-${sends.length}` };
    });
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    await sdk.ingest({ channel: 'whatsapp', from: '+15550305678', text: 'where is my parcel?', messageId: 'in-1' });
    await until(
      () => sends,
      (s) => s.length >= 1,
    );
    await sleep(500);
    expect(sends).toEqual([expect.objectContaining({ to: '+15550305678', content: TEXT })]);
  });
});
