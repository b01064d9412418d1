// Issue 35 on WhatsApp: what a customer waiting for a person reads there — outside the opening hours when the team is
// back (the team's time zone named, Monday 09:00 after the spring clock change), and once no agent answered within
// offline_after_minutes that the team will reply here (no email form on WhatsApp). The fake Graph API receives what
// is sent; the injected clock is frozen and moved by the test. Both engines.
import { afterEach, describe, expect, it } from 'vitest';
import { createClock } from '../../src/clock.ts';
import { HANDOFF_TEXTS } from '../../src/handoff/texts.ts';
import { postWebhook, textMessageAt, until, webhookBody } from '../support/whatsapp.ts';
import { whatsappParley } from '../support/whatsapp-parley.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const PHONE = '+15550003333';
const CLOSED_TEXT = 'Our team is away right now and back on Monday 09:00 (Europe/Berlin). Your messages are kept: a person will reply here then.';

describe('WhatsApp texts while waiting for a person', () => {
  it('closed: when the team is back; no agent within offline_after_minutes: the team will reply here', async () => {
    // Friday 27 March 2026, 17:30 in Berlin.
    const clock = createClock(() => Date.UTC(2026, 2, 27, 16, 30));
    const { graph, p } = await whatsappParley(open, {
      clock,
      // No gathering window: with the clock frozen it would never close.
      gatherMs: 0,
      handoff: { business_hours: { time_zone: 'Europe/Berlin', weekly: { mon: ['09:00-17:00'], fri: ['09:00-17:00'] } } },
    });
    const texts = () => graph.delivered().map((r) => r.body.text?.body as string);
    expect((await postWebhook(p.url(), webhookBody([textMessageAt(PHONE, 'Can I talk to a human please?', clock.now())]))).status).toBe(200);
    await until(texts, (t) => t.includes(CLOSED_TEXT), 20_000);
    await p.runtime.whatsapp.outboundQueue.idle();
    clock.setOffset(10 * 60_000);
    await until(texts, (t) => t.includes(HANDOFF_TEXTS.offline), 20_000);
    expect(texts().filter((t) => t === HANDOFF_TEXTS.offline)).toHaveLength(1);
    expect(texts()).not.toContain(HANDOFF_TEXTS.assistant);
  });
});
