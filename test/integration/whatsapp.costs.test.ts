// Issue 39 part 3: WhatsApp messages cost what Meta's pricing category says. The category each status reports is
// recorded; a billable message is counted once, at its `sent` status, at `channels.whatsapp.prices[category]`.
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_SECRET } from '../support/parley.ts';
import { parsePrometheusText } from '../support/prom-text.ts';
import { whatsappParley } from '../support/whatsapp-parley.ts';
import { postWebhook, textMessage, until, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const pricing = (category: string, billable = true) => ({ billable, pricing_model: 'PMP', category });

describe('WhatsApp costs', () => {
  it('a billable sent status is counted once at its category price; delivered/read, non-billable and unpriced ones are not', async () => {
    const { p, graph } = await whatsappParley(open, { whatsapp: { prices: { utility: 0.0085, marketing: 0.025 } } });
    await postWebhook(p.url(), webhookBody([textMessage('+15550107070', 'status of order 1001')]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
      20_000,
    );
    const wamid = 'wamid.fake.1';
    await until(
      () => p.services.store.whatsapp.delivery(wamid),
      (d) => d !== undefined,
      20_000,
    );
    const at = String(Math.floor(Date.now() / 1000));
    const status = (id: string, s: string, price: unknown) =>
      Object.assign({ id, status: s, recipient_id: '15550107070', timestamp: at }, price ? { pricing: price } : {});
    await postWebhook(
      p.url(),
      webhookBody(
        [],
        [
          status(wamid, 'sent', pricing('utility')),
          status(wamid, 'delivered', pricing('utility')),
          status(wamid, 'read', pricing('utility')),
          status('wamid.other.1', 'sent', pricing('service', false)),
          status('wamid.other.2', 'sent', pricing('authentication')),
          status('wamid.other.3', 'sent', { category: 42 }),
        ],
      ),
    );
    const get = async (path: string) => (await (await fetch(`${p.url()}${path}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).json()) as any;
    const statuses = await until(
      async () => (await get('/api/v1/telemetry/events?type=whatsapp.status&limit=100')).items as any[],
      (items) => items.length >= 6,
      20_000,
    );
    expect(statuses.map((e) => [e.data.status, e.data.pricing?.category, e.data.cost])).toEqual([
      ['sent', 'utility', 0.0085],
      ['delivered', 'utility', undefined],
      ['read', 'utility', undefined],
      ['sent', 'service', undefined],
      ['sent', 'authentication', undefined],
      ['sent', undefined, undefined],
    ]);
    const costs = await get('/api/v1/telemetry/costs?by=conversation');
    expect(costs.total).toMatchObject({ whatsapp: 0.0085, whatsappMessages: 1, llm: 0 });
    expect(costs.groups.find((g: any) => g.whatsapp > 0)).toMatchObject({ key: statuses[0].conversationId, whatsapp: 0.0085, cost: 0.0085 });
    expect(statuses[0].conversationId).toEqual(expect.any(String));
    const summary = await get('/api/v1/telemetry/summary');
    expect(summary.cost).toMatchObject({ whatsapp: 0.0085, byCategory: { utility: 0.0085 } });
    const metrics = parsePrometheusText(await (await fetch(`${p.url()}/metrics`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).text());
    expect(metrics.get('parley_whatsapp_cost_total')?.samples).toEqual([
      { name: 'parley_whatsapp_cost_total', labels: { category: 'utility' }, value: 0.0085 },
    ]);
  });
});
