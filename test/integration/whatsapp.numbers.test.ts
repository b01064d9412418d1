// Several business numbers on one WhatsApp Business Account (`channels.whatsapp.other_numbers`): a message that
// reached any of them is answered from the number it reached, a later proactive message goes from the number the
// customer last wrote to, and statuses for any of them are applied. Real server, fake Graph API, signed bodies.
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeGraph, GraphRequest } from '../support/fake-graph.ts';
import { TEST_SECRET, type TestParley } from '../support/parley.ts';
import { telemetryEvents, whatsappParley } from '../support/whatsapp-parley.ts';
import { postWebhook, textMessage, textMessageAt, until, WA, webhookBody, webhookBodyFor } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** Another number of the same business, as in Meta's documentation samples. */
const SECOND = '106540352242922';
const THIRD = '123456123';

const sentFrom = (r: GraphRequest) => /^\/v21\.0\/([^/]+)\/messages$/.exec(r.url)?.[1];
const deliveredTo = (g: FakeGraph, phone: string) => g.delivered().filter((r) => r.body.to === phone.replace('+', ''));
const waitDelivered = (g: FakeGraph, n: number) =>
  until(
    () => g.delivered(),
    (d) => d.length >= n,
  );

const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
const post = (p: TestParley, path: string, body: unknown) => fetch(`${p.url()}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });

describe('other_numbers: answer (the default)', () => {
  it('a message to a second number is answered from it; one to the configured number from the configured id', async () => {
    const { p, graph } = await whatsappParley(open);
    expect((await postWebhook(p.url(), webhookBodyFor(SECOND, [textMessage('+15550301010', 'status of order 1001')]))).status).toBe(200);
    expect((await postWebhook(p.url(), webhookBody([textMessage('+15550302020', 'status of order 2002')]))).status).toBe(200);
    expect((await postWebhook(p.url(), webhookBodyFor(THIRD, [textMessage('+15550303030', 'status of order 3003')]))).status).toBe(200);
    await waitDelivered(graph, 3);
    expect(deliveredTo(graph, '+15550301010').map(sentFrom)).toEqual([SECOND]);
    expect(deliveredTo(graph, '+15550302020').map(sentFrom)).toEqual([WA.phone_id]);
    expect(deliveredTo(graph, '+15550303030').map(sentFrom)).toEqual([THIRD]);
    // Every customer message got exactly one reply; nothing was ignored.
    expect(graph.requests).toHaveLength(3);
    expect(await telemetryEvents(p, 'whatsapp.ignored')).toEqual([]);
    expect((await p.services.store.customers.findBy('phone', '+15550301010'))?.businessNumberId).toBe(SECOND);
  });

  it('the customer writes to another number later: the reply goes from that one; an older redelivered message does not move them back', async () => {
    const { p, graph } = await whatsappParley(open);
    await postWebhook(p.url(), webhookBodyFor(SECOND, [textMessage('+15550304040', 'status of order 1001')]));
    await waitDelivered(graph, 1);
    await postWebhook(p.url(), webhookBody([textMessage('+15550304040', 'status of order 2002')]));
    await waitDelivered(graph, 2);
    // A message Meta redelivers late, written an hour ago to the second number: answered, from the latest number.
    await postWebhook(p.url(), webhookBodyFor(SECOND, [textMessageAt('+15550304040', 'status of order 3003', Date.now() - 3600_000)]));
    await waitDelivered(graph, 3);
    expect(deliveredTo(graph, '+15550304040').map(sentFrom)).toEqual([SECOND, WA.phone_id, WA.phone_id]);
    expect((await p.services.store.customers.findBy('phone', '+15550304040'))?.businessNumberId).toBe(WA.phone_id);
  });

  it('a later proactive message goes from the number the customer last wrote to; one to a customer who never wrote from phone_id', async () => {
    const { p, graph } = await whatsappParley(open, { proactive: true });
    await postWebhook(p.url(), webhookBodyFor(SECOND, [textMessage('+15550305050', 'status of order 1001')]));
    await waitDelivered(graph, 1);
    expect((await post(p, '/proactive/opt-in', { customerExternalId: '+15550305050', optIn: true })).status).toBe(200);
    const r = await (await post(p, '/proactive', { customerExternalId: '+15550305050', channel: 'whatsapp', content: 'Your order 1001 has shipped' })).json();
    expect(r.accepted).toBe(true);
    await waitDelivered(graph, 2);
    const proactive = graph.delivered().find((x) => x.body.text?.body === 'Your order 1001 has shipped');
    expect(proactive && sentFrom(proactive)).toBe(SECOND);

    // Known by phone (the integrator linked it), never wrote on WhatsApp: a template from the configured number.
    const { createCustomerRepo } = await import('../../src/customers/repo.ts');
    await createCustomerRepo(p.services.store, p.services.clock).upsert({ externalId: 'never-wrote', phone: '+15550306060' });
    await post(p, '/proactive/opt-in', { customerExternalId: 'never-wrote', optIn: true });
    const t = await (
      await post(p, '/proactive', { customerExternalId: 'never-wrote', channel: 'whatsapp', content: 'hi', template: { name: 'welcome', language: 'en' } })
    ).json();
    expect(t.accepted).toBe(true);
    await waitDelivered(graph, 3);
    expect(deliveredTo(graph, '+15550306060').map(sentFrom)).toEqual([WA.phone_id]);
  });

  it('a status webhook for the second number is applied to the delivery sent from it', async () => {
    const { p, graph } = await whatsappParley(open);
    await postWebhook(p.url(), webhookBodyFor(SECOND, [textMessage('+15550307070', 'status of order 1001')]));
    await waitDelivered(graph, 1);
    const delivery = await until(
      async () => (await telemetryEvents(p, 'whatsapp.outbound')).find((e) => e.data.status === 'accepted'),
      (e) => e !== undefined,
    );
    const wamid = delivery!.data.providerMessageId as string;
    const status = { id: wamid, status: 'delivered', timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: '15550307070' };
    const res = await postWebhook(p.url(), webhookBodyFor(SECOND, [], [status]));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ statuses: 1 });
    expect((await p.services.store.whatsapp.delivery(wamid))?.status).toBe('delivered');
    expect(await telemetryEvents(p, 'whatsapp.ignored')).toEqual([]);
  });
});

describe('other_numbers: ignore', () => {
  it('a message to a second number is ignored (logged, counted); the configured number is answered from it', async () => {
    const { p, graph } = await whatsappParley(open, { whatsapp: { other_numbers: 'ignore' } });
    const res = await postWebhook(p.url(), webhookBodyFor(SECOND, [textMessage('+15550308080', 'status of order 1001')]));
    expect(await res.json()).toMatchObject({ queued: 0 });
    await postWebhook(p.url(), webhookBody([textMessage('+15550309090', 'status of order 2002')]));
    await waitDelivered(graph, 1);
    expect(graph.delivered().map((r) => [r.body.to, sentFrom(r)])).toEqual([['15550309090', WA.phone_id]]);
    expect(await telemetryEvents(p, 'whatsapp.ignored')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ what: 'messages', count: 1, phoneNumberIds: [SECOND] }) }),
    ]);
  });
});
