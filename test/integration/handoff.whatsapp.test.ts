// Issue 19: human handoff on WhatsApp, against the local fake Graph API: the customer asks for a person, gets one short
// text per change, the agent's reply goes out through the outbound queue, customer messages are not answered by the
// model meanwhile, release brings the assistant back; an agent reply outside the 24 h window is refused.
import { afterEach, describe, expect, it } from 'vitest';
import { HANDOFF_TEXTS } from '../../src/whatsapp/channel.ts';
import { TEST_SECRET, type TestParley } from '../support/parley.ts';
import { postWebhook, sleep, textMessage, until, webhookBody } from '../support/whatsapp.ts';
import { whatsappParley } from '../support/whatsapp-parley.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function api(p: TestParley, method: string, path: string, body?: unknown) {
  const res = await fetch(`${p.url()}${path}`, {
    method,
    headers: body === undefined ? { authorization: `Bearer ${TEST_SECRET}` } : { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const PHONE = '+15550001111';
/** The machine running the tests is shared and loaded: a turn may take seconds. */
const SLOW = 20_000;

describe('human handoff on WhatsApp', () => {
  it('a person takes over and hands back; agent replies go through Graph; an agent reply outside the 24 h window is refused', async () => {
    // A long idle release: the clock jumps a day ahead below.
    const { graph, p } = await whatsappParley(open, { handoff: { offline_after_minutes: 3 * 24 * 60 } });
    const texts = () => graph.delivered().map((r) => r.body.text?.body as string);
    const customerSays = async (text: string) => expect((await postWebhook(p.url(), webhookBody([textMessage(PHONE, text)]))).status).toBe(200);

    await customerSays('Can I talk to a human please?');
    await until(texts, (t) => t.includes(HANDOFF_TEXTS.human), SLOW);
    const inbox = await api(p, 'GET', '/conversations?state=withHuman');
    expect(inbox.body.items).toHaveLength(1);
    const { conversationId, channel } = inbox.body.items[0];
    expect(channel).toBe('whatsapp');
    const read = await api(p, 'GET', `/conversations/${conversationId}`);
    expect(read.body.customer).toMatchObject({ phone: PHONE, externalId: PHONE });

    const reply = await api(p, 'POST', `/conversations/${conversationId}/messages`, { text: 'Hi, this is Alex from support.', author: { name: 'Alex' } });
    expect(reply.status).toBe(201);
    await until(texts, (t) => t.includes('Hi, this is Alex from support.'), SLOW);
    expect(graph.delivered().at(-1)!.body.to).toBe(PHONE.slice(1));

    const before = texts().length;
    await customerSays('My order 1001 is late');
    await until(
      async () => (await api(p, 'GET', `/conversations/${conversationId}`)).body.messages.map((m: any) => m.text),
      (m) => m.includes('My order 1001 is late'),
      SLOW,
    );
    await sleep(300);
    expect(texts().length).toBe(before); // the model said nothing

    expect((await api(p, 'POST', `/conversations/${conversationId}/release`)).status).toBe(200);
    await until(texts, (t) => t.includes(HANDOFF_TEXTS.assistant), SLOW);
    await customerSays('what is the status of order 1001?');
    await until(texts, (t) => t.some((x) => /1001/.test(x) && /shipped/.test(x)), SLOW);

    // Handed over again, and the customer's last message is now over 24 hours old.
    expect((await api(p, 'POST', `/conversations/${conversationId}/handoff`, { reason: 'follow-up' })).body.state).toBe('withHuman');
    // Now one first reply is known (Alex's, within the minute): the usual wait is said (issue 35).
    await until(texts, (t) => t.includes('A person from our team will reply here shortly (usually within 1 minute).'), SLOW);
    // Its job finished (not only accepted by Graph) before the clock jumps, or the jump would expire its lease.
    await p.runtime.whatsapp.outboundQueue.idle();
    await fetch(`${p.url()}/__test__/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ offsetMs: 25 * 3600_000 }),
    });
    const sent = graph.delivered().length;
    const late = await api(p, 'POST', `/conversations/${conversationId}/messages`, { text: 'Are you still there?', author: { name: 'Alex' } });
    expect(late.status).toBe(422);
    expect(late.body.error.code).toBe('outside_window');
    expect(late.body.error.message).toMatch(/template/);
    await sleep(200);
    expect(texts().slice(sent)).toEqual([]);
  });
});
