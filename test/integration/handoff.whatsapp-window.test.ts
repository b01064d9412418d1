// Issue 34, part 6: Parley's own WhatsApp handoff notices ("A person will reply…", "…our assistant again") are
// free-form text, so they respect the customer's 24 h window like agents' messages: outside it they are not sent,
// and each skip is recorded (telemetry `whatsapp.notice_skipped`, reason `outside_window`). Test clock, fake Graph API.
import { afterEach, describe, expect, it } from 'vitest';
import { CANCELLED_TEXT } from '../../src/whatsapp/cancelled.ts';
import { HANDOFF_TEXTS } from '../../src/whatsapp/channel.ts';
import { TEST_SECRET, type TestParley } from '../support/parley.ts';
import { buttonReply, postWebhook, sleep, textMessage, textMessageAt, until, webhookBody } from '../support/whatsapp.ts';
import { telemetryEvents, whatsappParley } from '../support/whatsapp-parley.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function api(p: TestParley, path: string, body: unknown = {}) {
  const res = await fetch(`${p.url()}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const PHONE = '+15550002222';
const SLOW = 20_000;

describe('WhatsApp handoff notices and the 24 h window', () => {
  it('outside the window the notices are skipped and recorded; inside it they are sent', async () => {
    const { graph, p } = await whatsappParley(open, { handoff: { offline_after_minutes: 3 * 24 * 60 } });
    const texts = () => graph.delivered().map((r) => r.body.text?.body as string);
    const customerSays = async (text: string) => expect((await postWebhook(p.url(), webhookBody([textMessage(PHONE, text)]))).status).toBe(200);

    await customerSays('Can I talk to a human please?');
    await until(texts, (t) => t.includes(HANDOFF_TEXTS.human), SLOW);
    await p.runtime.whatsapp.outboundQueue.idle();
    const conversationId = (
      await fetch(`${p.url()}/conversations?state=withHuman`, { headers: { authorization: `Bearer ${TEST_SECRET}` } }).then((r) => r.json())
    ).items[0].conversationId as string;

    // A day later: the customer's last message is over 24 hours old.
    await fetch(`${p.url()}/__test__/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ offsetMs: 25 * 3600_000 }),
    });
    const sent = graph.delivered().length;
    expect((await api(p, `/conversations/${conversationId}/release`)).body.state).toBe('idle');
    expect((await api(p, `/conversations/${conversationId}/handoff`, { reason: 'follow-up' })).body.state).toBe('withHuman');
    const skipped = await until(
      () => telemetryEvents(p, 'whatsapp.notice_skipped'),
      (e) => e.length === 2,
      SLOW,
    );
    expect(skipped.map((e: any) => [e.conversationId, e.data])).toEqual([
      [conversationId, { notice: 'released', reason: 'outside_window' }],
      [conversationId, { notice: 'requested', reason: 'outside_window' }],
    ]);
    await p.runtime.whatsapp.outboundQueue.idle();
    await sleep(200);
    expect(texts().slice(sent)).toEqual([]);

    // The customer writes again: the window is open, the next notice goes out.
    expect((await postWebhook(p.url(), webhookBody([textMessageAt(PHONE, 'hello?', p.services.clock.now())]))).status).toBe(200);
    await until(
      async () =>
        (await fetch(`${p.url()}/conversations/${conversationId}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } }).then((r) => r.json())).messages,
      (m: any[]) => m.some((x) => x.text === 'hello?'),
      SLOW,
    );
    expect((await api(p, `/conversations/${conversationId}/release`)).status).toBe(200);
    await until(texts, (t) => t.slice(sent).includes(HANDOFF_TEXTS.assistant), SLOW);
    expect(await telemetryEvents(p, 'whatsapp.notice_skipped')).toHaveLength(2);
  });

  it('a handoff while the Yes/No buttons wait: a later Yes is answered that it was cancelled, and the write never runs', async () => {
    const { graph, p, invoked } = await whatsappParley(open);
    const phone = '+15550003333';
    expect((await postWebhook(p.url(), webhookBody([textMessage(phone, 'cancel order 1001')]))).status).toBe(200);
    const [prompt] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
      SLOW,
    );
    const buttons = prompt.body.interactive.action.buttons as { reply: { id: string } }[];
    const [{ conversationId }] = await p.services.store.conversations.summaries({ limit: 10 });
    expect((await api(p, `/conversations/${conversationId}/handoff`)).body.state).toBe('withHuman');
    await until(
      () => graph.delivered().map((r) => r.body.text?.body),
      (t) => t.includes(HANDOFF_TEXTS.human),
      SLOW,
    );
    expect((await postWebhook(p.url(), webhookBody([buttonReply(phone, buttons[0].reply.id, 'Yes')]))).status).toBe(200);
    await until(
      () => graph.delivered().map((r) => r.body.text?.body),
      (t) => t.includes(CANCELLED_TEXT),
      SLOW,
    );
    await sleep(300);
    expect(invoked).toEqual([]);
  });
});
