// Issue 5: the WhatsApp channel against a local fake Graph API.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createParley } from '../../src/app.ts';
import { startFakeGraph } from '../support/fake-graph.ts';
import { telemetryEvents, whatsappParley } from '../support/whatsapp-parley.ts';
import { startParley, TEST_SECRET, tempDir } from '../support/parley.ts';
import { allCustomers } from '../support/stored.ts';
import { buttonReply, postWebhook, textMessage, until, WA, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const setup = (o: Parameters<typeof whatsappParley>[1] = {}) => whatsappParley(open, o);
const events = telemetryEvents;

describe('WhatsApp webhook', () => {
  it('subscription challenge: right token → the challenge as text; wrong → 403', async () => {
    const { p } = await setup({ backend: false });
    const ok = await fetch(`${p.url()}/wa/webhook?hub.mode=subscribe&hub.verify_token=${WA.verify_token}&hub.challenge=12345`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/text\/plain/);
    expect(await ok.text()).toBe('12345');
    const bad = await fetch(`${p.url()}/wa/webhook?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=12345`);
    expect(bad.status).toBe(403);
    expect((await bad.json()).error.code).toBe('forbidden');
  });

  it('a signed message is answered through the Graph API with the right URL, token and body', async () => {
    const { p, graph, invoked } = await setup();
    const res = await postWebhook(p.url(), webhookBody([textMessage('+15550003333', 'What is the status of order 1001?')]));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: 1, queued: 1, statuses: 0, ignored: 0 });
    const [sent] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    expect(sent.url).toBe(`/v21.0/${WA.phone_id}/messages`);
    expect(sent.headers.authorization).toBe(`Bearer ${WA.token}`);
    expect(sent.body).toMatchObject({ messaging_product: 'whatsapp', to: '15550003333', type: 'text' });
    expect(sent.body.text.body).toContain('shipped');
    expect(invoked).toEqual([{ name: 'getOrderStatus', args: { orderId: '1001' } }]);
    // the customer first seen on WhatsApp gets its E.164 number as externalId
    const customer = expect.objectContaining({ externalId: '+15550003333', phone: '+15550003333', lastInboundAt: { whatsapp: expect.any(Number) } });
    expect(await p.services.store.customers.findBy('phone', '+15550003333')).toEqual(customer);
    // and is the only one
    expect(await allCustomers(p)).toEqual([customer]);
  });

  it('a bad or missing signature → 401 and nothing queued or sent', async () => {
    const { p, graph } = await setup();
    const body = webhookBody([textMessage('+15550003333', 'hello')]);
    expect((await postWebhook(p.url(), body, { secret: 'wrong' })).status).toBe(401);
    expect((await postWebhook(p.url(), body, { signature: null })).status).toBe(401);
    expect((await postWebhook(p.url(), body, { signature: 'sha256=zz' })).status).toBe(401);
    // a valid signature over different bytes fails too
    const raw = JSON.stringify(body);
    const res = await fetch(`${p.url()}/wa/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': (await import('../../src/whatsapp/signature.ts')).signPayload(`${raw} `, WA.app_secret),
      },
      body: raw,
    });
    expect(res.status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect(graph.requests).toHaveLength(0);
    expect(await events(p, 'whatsapp.inbound')).toHaveLength(0);
  });

  it('the same message id posted three times is answered once', async () => {
    const { p, graph } = await setup();
    const msg = textMessage('+15550004444', 'status of order 1001');
    const bodies = await Promise.all([1, 2, 3].map(() => postWebhook(p.url(), webhookBody([msg])).then((r) => r.json())));
    expect(bodies.map((b) => b.queued).sort()).toEqual([0, 0, 1]);
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 400));
    expect(graph.delivered()).toHaveLength(1);
  });

  it('two messages from one phone sent together are one burst: answered by one reply, to the latest', async () => {
    const { p, graph } = await setup({ bursts: true });
    await postWebhook(p.url(), webhookBody([textMessage('+15550005555', 'status of order 1001'), textMessage('+15550005555', 'status of order 2002')]));
    const sent = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 2_500)); // past the gathering window: nothing more comes
    expect(graph.delivered()).toHaveLength(1);
    expect(/\d{4}/.exec(sent[0].body.text.body)?.[0]).toBe('2002');
  });

  it('Graph 500 then 200 → delivered exactly once, after a retry', async () => {
    const { p, graph } = await setup();
    graph.failNext({ status: 500 });
    await postWebhook(p.url(), webhookBody([textMessage('+15550006666', 'status of order 1001')]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    expect(graph.requests).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(graph.delivered()).toHaveLength(1);
  });

  it('429 with Retry-After is honoured', async () => {
    const { p, graph } = await setup();
    graph.failNext({ status: 429, retryAfter: '1' });
    await postWebhook(p.url(), webhookBody([textMessage('+15550006667', 'status of order 1001')]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    expect(graph.requests[1].at - graph.requests[0].at).toBeGreaterThanOrEqual(950);
  });

  it('Graph 400 → not retried, dead-lettered and visible in telemetry with Meta’s code', async () => {
    const { p, graph } = await setup();
    graph.failNext({ status: 400, code: 131030 });
    await postWebhook(p.url(), webhookBody([textMessage('+15550007777', 'status of order 1001')]));
    const failed = await until(
      () => events(p, 'whatsapp.outbound'),
      (e) => e.some((x) => x.data.status === 'failed'),
    );
    expect(failed.find((x) => x.data.status === 'failed')!.data).toMatchObject({ httpStatus: 400, code: 131030 });
    expect(
      await until(
        () => events(p, 'whatsapp.dead_letter'),
        (e) => e.length === 1,
      ),
    ).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(graph.requests).toHaveLength(1);
  });

  it('statuses update the delivery state (telemetry)', async () => {
    const { p, graph } = await setup();
    await postWebhook(p.url(), webhookBody([textMessage('+15550008888', 'status of order 1001')]));
    const [sent] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    await until(
      () => events(p, 'whatsapp.outbound'),
      (e) => e.some((x) => x.data.status === 'accepted'),
    );
    const wamid = (await events(p, 'whatsapp.outbound')).find((x) => x.data.status === 'accepted')!.data.providerMessageId as string;
    expect(wamid).toMatch(/^wamid\.fake\./);
    void sent;
    await postWebhook(
      p.url(),
      webhookBody(
        [],
        [
          { id: wamid, status: 'delivered', recipient_id: '15550008888', timestamp: '1700000000' },
          { id: wamid, status: 'read', recipient_id: '15550008888', timestamp: '1700000001' },
        ],
      ),
    );
    const statuses = await until(
      () => events(p, 'whatsapp.status'),
      (e) => e.length >= 2,
    );
    expect(statuses.map((s) => [s.data.status, s.data.known])).toEqual([
      ['delivered', true],
      ['read', true],
    ]);
  });

  it('write confirmation by interactive button reply', async () => {
    const { p, graph, invoked } = await setup();
    await postWebhook(p.url(), webhookBody([textMessage('+15550009999', 'cancel order 1001')]));
    const [prompt] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    expect(prompt.body.type).toBe('interactive');
    const buttons = prompt.body.interactive.action.buttons as { reply: { id: string; title: string } }[];
    expect(buttons.map((b) => b.reply.title)).toEqual(['Yes', 'No']);
    expect(invoked).toHaveLength(0);
    await postWebhook(p.url(), webhookBody([buttonReply('+15550009999', buttons[0].reply.id, 'Yes')]));
    const sent = await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
    );
    expect(sent[1].body.text.body).toMatch(/cancelled/);
    expect(invoked).toEqual([{ name: 'cancelOrder', args: { orderId: '1001' } }]);
  });

  it('a typed "no" declines a pending confirmation', async () => {
    const { p, graph, invoked } = await setup();
    await postWebhook(p.url(), webhookBody([textMessage('+15550001212', 'cancel order 1001')]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    await postWebhook(p.url(), webhookBody([textMessage('+15550001212', 'No')]));
    const sent = await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
    );
    expect(sent[1].body.text.body).toMatch(/didn't go ahead/);
    expect(invoked).toHaveLength(0);
  });

  it('the webhook route follows webhook_path; a body without the webhook envelope → 400', async () => {
    const { p } = await setup({ whatsapp: { webhook_path: '/hooks/meta' }, backend: false });
    expect((await fetch(`${p.url()}/wa/webhook?hub.mode=subscribe&hub.verify_token=${WA.verify_token}&hub.challenge=1`)).status).toBe(404);
    expect((await fetch(`${p.url()}/hooks/meta?hub.mode=subscribe&hub.verify_token=${WA.verify_token}&hub.challenge=1`)).status).toBe(200);
    const res = await postWebhook(p.url(), { object: 'page' }, { path: '/hooks/meta' });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/entry/);
  });
});

describe('WhatsApp configuration', () => {
  it('provider meta with missing credentials stops start-up with a clear message (outside test mode)', async () => {
    const config = ConfigSchema.parse({
      storage: { path: tempDir() },
      secret: 'whatsapp-config-secret-0123',
      logging: { level: 'silent' },
      channels: { whatsapp: { enabled: true, provider: 'meta', verify_token: 'v' } },
    });
    await expect(createParley({ config, testMode: false })).rejects.toThrow(
      'channels.whatsapp: provider "meta" is enabled but app_secret (WA_APP_SECRET), phone_id (WA_PHONE_ID), token (WA_TOKEN) are not set',
    );
  });

  it('test mode without Graph credentials uses the mock sender: /__test__/whatsapp/outbox', async () => {
    const p = await startParley({
      config: { channels: { whatsapp: { enabled: true, provider: 'meta', verify_token: WA.verify_token, app_secret: WA.app_secret } } },
    });
    open.push(p);
    await postWebhook(p.url(), webhookBody([textMessage('+15550002020', 'hello')]));
    const box = await until(
      async () => (await fetch(`${p.url()}/__test__/whatsapp/outbox`)).json(),
      (b: { messages: unknown[] }) => b.messages.length >= 1,
    );
    expect(box.messages[0]).toMatchObject({ id: expect.any(String), to: '+15550002020', type: 'text', text: expect.any(String), sentAt: expect.any(Number) });
    expect((await fetch(`${p.url()}/__test__/whatsapp/outbox`, { method: 'DELETE' })).status).toBe(200);
    expect((await (await fetch(`${p.url()}/__test__/whatsapp/outbox`)).json()).messages).toEqual([]);
  });
});

describe('provider sdk', () => {
  it('ingest → answer delivered through onSend; nothing goes to Graph', async () => {
    const graph = await startFakeGraph();
    open.push(graph);
    const p = await startParley({ config: { channels: { whatsapp: { enabled: true, provider: 'sdk', graph_url: graph.url } } } });
    open.push(p);
    const sent: { channel: string; to: string; content: string }[] = [];
    const verified: boolean[] = [];
    const sdk = createClient();
    sdk.expose(
      'getOrderStatus',
      { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
      async ({ orderId }: { orderId: string }, ctx) => {
        verified.push(ctx.verified);
        return { orderId, status: 'shipped' };
      },
    );
    sdk.onSend(async (m: { channel: string; to: string; content: string }) => {
      sent.push(m);
      return { messageId: `own-${sent.length}` };
    });
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    const ack = await sdk.ingest({ channel: 'whatsapp', from: '+15550003030', text: 'status of order 1001', messageId: 'own-in-1' });
    expect(ack).toMatchObject({ ok: true });
    const again = await sdk.ingest({ channel: 'whatsapp', from: '+15550003030', text: 'status of order 1001', messageId: 'own-in-1' });
    expect(again).toMatchObject({ ok: true });
    await until(
      () => sent,
      (s) => s.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(sent).toEqual([{ channel: 'whatsapp', to: '+15550003030', content: expect.stringContaining('shipped') }]);
    expect(graph.requests).toHaveLength(0);
    // A WhatsApp number is a verified customer (issue 32: context.verified).
    expect(verified).toEqual([true]);
  });

  it('ingest from a BSUID (a user with no phone number) → onSend gets the BSUID as `to`; a `from` that is neither → ok:false', async () => {
    const p = await startParley({ config: { channels: { whatsapp: { enabled: true, provider: 'sdk' } } } });
    open.push(p);
    const sent: { to: string; content: string }[] = [];
    const sdk = createClient();
    sdk.onSend(async (m: { to: string; content: string }) => void sent.push(m));
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    expect(await sdk.ingest({ channel: 'whatsapp', from: 'US.13491208655302741918', text: 'hello', messageId: 'own-in-b1' })).toMatchObject({ ok: true });
    await until(
      () => sent,
      (s) => s.length >= 1,
    );
    expect(sent[0].to).toBe('US.13491208655302741918');
    const bad = await sdk.ingest({ channel: 'whatsapp', from: 'hello there', text: 'x' });
    expect(bad).toMatchObject({ ok: false, error: expect.stringMatching(/BSUID/) });
  });

  it('with no SDK able to send, outbound jobs wait and go out when one registers', async () => {
    const p = await startParley({ config: { channels: { whatsapp: { enabled: true, provider: 'sdk' } } } });
    open.push(p);
    const ingester = createClient();
    await ingester.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(ingester);
    await ingester.ingest({ channel: 'whatsapp', from: '+15550004040', text: 'hello' });
    // The reply is stored and waits for a sender.
    await until(
      () => p.runtime.whatsapp.outboundQueue.depth(),
      (d) => d === 1,
    );
    const sent: unknown[] = [];
    const sender = createClient();
    sender.onSend(async (m: unknown) => {
      sent.push(m);
      return {};
    });
    await sender.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sender);
    await until(
      () => sent,
      (s) => s.length >= 1,
    );
    expect(sent).toHaveLength(1);
  });
});
