// Issue 33 part 4: a reply written in Markdown reaches WhatsApp in WhatsApp's formatting (through the outbound queue
// and the fake Graph API), here a person's reply during a handoff.
import { afterEach, describe, expect, it } from 'vitest';
import { HANDOFF_TEXTS } from '../../src/whatsapp/channel.ts';
import { TEST_SECRET } from '../support/parley.ts';
import { postWebhook, textMessage, until, webhookBody } from '../support/whatsapp.ts';
import { whatsappParley } from '../support/whatsapp-parley.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('WhatsApp formatting of outbound replies', () => {
  it('**bold**, *italic* and [text](url) go out as *bold*, _italic_ and text (url)', async () => {
    const { graph, p } = await whatsappParley(open, {});
    const texts = () => graph.delivered().map((r) => r.body.text?.body as string);
    expect((await postWebhook(p.url(), webhookBody([textMessage('+15550004444', 'Can I talk to a human please?')]))).status).toBe(200);
    await until(texts, (t) => t.includes(HANDOFF_TEXTS.human), 20_000);
    const headers = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
    const inbox = (await (await fetch(`${p.url()}/conversations?state=withHuman`, { headers })).json()) as any;
    const id = inbox.items[0].conversationId as string;
    const text = 'Your **order 1001** has *shipped*: [track it](https://ups.example/t?n=1Z_9).';
    const res = await fetch(`${p.url()}/conversations/${id}/messages`, { method: 'POST', headers, body: JSON.stringify({ text, author: { name: 'Alex' } }) });
    expect(res.status).toBe(201);
    await until(texts, (t) => t.some((x) => x?.startsWith('Your ')), 20_000);
    expect(texts().find((x) => x?.startsWith('Your '))).toBe('Your *order 1001* has _shipped_: track it (https://ups.example/t?n=1Z_9).');
  });
});
