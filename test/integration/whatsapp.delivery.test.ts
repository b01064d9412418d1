// WhatsApp delivery guarantees against a local fake Graph API: uncertain sends,
// ordering across webhook posts, de-dup after the reply, statuses, test mode,
// identity links and the confirmation replay.
import { afterEach, describe, expect, it } from 'vitest';
import { conversationIdFor } from '../../src/conversations/history.ts';
import type { FakeGraph } from '../support/fake-graph.ts';
import { telemetryEvents, whatsappParley } from '../support/whatsapp-parley.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { allCustomers, storedValues } from '../support/stored.ts';
import { buttonReply, postWebhook, sleep, textMessage, textMessageAt, until, WA, webhookBody, webhookBodyFor } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const setup = (o: Parameters<typeof whatsappParley>[1] = {}) => whatsappParley(open, o);
const events = telemetryEvents;

/** Everything the job queues stored: jobs, their ids, their sequence reservations. */
const storedJobs = (p: TestParley) => storedValues(p, 'jobs');
const deliveries = (p: TestParley) => storedValues<{ status: string; jobId?: string }>(p, 'deliveries');
const orderOf = (g: FakeGraph) => g.delivered().map((s) => /\d{4}/.exec(s.body.text?.body ?? '')?.[0]);

describe('uncertain sends (request out, no answer)', () => {
  it('Graph accepts but answers after send_timeout_ms; its status webhook arrives → delivered once, never resent', async () => {
    const { p, graph } = await setup({ statuses: true, whatsapp: { send_timeout_ms: 300, uncertain_grace_ms: 4000 } });
    graph.failNext({ slowMs: 1200 });
    graph.holdStatuses(true); // Meta's status comes after the client gave up waiting for the answer
    await postWebhook(p.url(), webhookBody([textMessage('+15550101010', 'status of order 1001')]));
    await until(
      () => graph.requests,
      (r) => r.length >= 1,
    );
    await sleep(1500);
    graph.holdStatuses(false);
    await until(
      () => p.runtime.whatsapp.outboundQueue.depth(),
      (d) => d === 0,
    );
    // accepted through the status webhook (it may come before or after the client gave up on the answer)
    await until(
      () => events(p, 'whatsapp.outbound'),
      (e) => e.some((x) => x.data.status === 'accepted' && x.data.resolvedBy === 'status'),
    );
    await sleep(4500); // past the grace period: nothing may go out again
    expect(graph.requests).toHaveLength(1);
    expect(graph.delivered()).toHaveLength(1);
    expect((await events(p, 'whatsapp.outbound')).map((e) => e.data.status)).not.toContain('resending');
    // the delivery record exists (made when the status resolved the job)
    expect(await deliveries(p)).toEqual([expect.objectContaining({ jobId: expect.stringMatching(/^out:/), status: 'sent' })]);
  });

  it('Graph never answers and no status comes within uncertain_grace_ms → resent once, after the grace', async () => {
    const { p, graph } = await setup({ statuses: true, whatsapp: { send_timeout_ms: 300, uncertain_grace_ms: 1500 } });
    graph.failNext({ hang: true });
    await postWebhook(p.url(), webhookBody([textMessage('+15550101011', 'status of order 1001')]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    await sleep(500);
    expect(graph.requests).toHaveLength(2);
    expect(graph.delivered()).toHaveLength(1);
    expect(graph.requests[1].at - graph.requests[0].at).toBeGreaterThanOrEqual(1400);
    expect(graph.requests[1].body.biz_opaque_callback_data).toBe(graph.requests[0].body.biz_opaque_callback_data);
  });
});

describe('ordering and de-dup across webhook posts', () => {
  it('two posts from one phone: the first reply fails with 500 once, so the second waits; Graph sees them in order', async () => {
    const { p, graph } = await setup();
    graph.failNext({ status: 500 });
    expect((await postWebhook(p.url(), webhookBody([textMessage('+15550102020', 'status of order 1001')]))).status).toBe(200);
    expect((await postWebhook(p.url(), webhookBody([textMessage('+15550102020', 'status of order 2002')]))).status).toBe(200);
    await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
    );
    expect(graph.requests.map((r) => /\d{4}/.exec(r.body.text.body)?.[0])).toEqual(['1001', '1001', '2002']);
    expect(orderOf(graph)).toEqual(['1001', '2002']);
  });

  it('the same message id re-posted after the reply went out → queued 0, still one reply', async () => {
    const { p, graph } = await setup();
    const msg = textMessage('+15550103030', 'status of order 1001');
    expect(await (await postWebhook(p.url(), webhookBody([msg]))).json()).toMatchObject({ queued: 1 });
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    await until(
      () => p.runtime.whatsapp.inbound.depth(),
      (d) => d === 0,
    );
    expect(await (await postWebhook(p.url(), webhookBody([msg]))).json()).toMatchObject({ received: 1, queued: 0 });
    await sleep(500);
    expect(graph.delivered()).toHaveLength(1);
  });

  it('a bad signature queues nothing (jobs table stays empty)', async () => {
    const { p } = await setup();
    expect((await postWebhook(p.url(), webhookBody([textMessage('+15550104040', 'hello')]), { secret: 'wrong' })).status).toBe(401);
    expect(await storedJobs(p)).toEqual([]);
    expect(p.runtime.whatsapp.inbound.depth()).toBe(0);
  });
});

describe('statuses and phone numbers', () => {
  it('statuses only move forward; one for a send not yet recorded is kept and applied when it is', async () => {
    const { p, graph } = await setup();
    graph.failNext({ slowMs: 400 }); // the answer is slow, the status webhook is not
    await postWebhook(p.url(), webhookBody([textMessage('+15550105050', 'status of order 1001')]));
    const [req] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    void req;
    const wamid = 'wamid.fake.1';
    await postWebhook(p.url(), webhookBody([], [{ id: wamid, status: 'delivered', recipient_id: '15550105050', timestamp: '1700000000' }]));
    const record = await until(
      () => p.services.store.whatsapp.delivery(wamid),
      (d) => d !== undefined,
    );
    expect(record!.status).toBe('delivered');
    await postWebhook(
      p.url(),
      webhookBody(
        [],
        [
          { id: wamid, status: 'read', timestamp: '1700000002' },
          { id: wamid, status: 'delivered', timestamp: '1700000001' },
        ],
      ),
    );
    expect((await p.services.store.whatsapp.delivery(wamid))!.status).toBe('read');
    await postWebhook(
      p.url(),
      webhookBody(
        [],
        [
          { id: wamid, status: 'failed', timestamp: '1700000003', errors: [{ code: 131026 }] },
          { id: wamid, status: 'delivered', timestamp: '1700000004' },
        ],
      ),
    );
    expect((await p.services.store.whatsapp.delivery(wamid))!.status).toBe('failed');
    const applied = (await events(p, 'whatsapp.status')).map((e) => [e.data.status, e.data.applied]);
    expect(applied).toEqual([
      ['delivered', true],
      ['read', true],
      ['delivered', false],
      ['failed', true],
      ['delivered', false],
    ]);
  });

  it('messages for another phone_number_id are ignored and logged (other_numbers: ignore)', async () => {
    const { p, graph } = await setup({ whatsapp: { other_numbers: 'ignore' } });
    const res = await postWebhook(p.url(), webhookBodyFor('999999', [textMessage('+15550106060', 'status of order 1001')]));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ queued: 0 });
    expect(await storedJobs(p)).toEqual([]);
    expect(p.logs.join('')).toMatch(/another phone number ignored/);
    expect(await events(p, 'whatsapp.ignored')).toEqual([expect.objectContaining({ data: expect.objectContaining({ count: 1, phoneNumberIds: ['999999'] }) })]);
    await sleep(300);
    expect(graph.requests).toHaveLength(0);
  });

  it('the 24-hour window starts at Meta’s message timestamp, not at processing time', async () => {
    const { p, graph } = await setup();
    const wroteAt = Date.now() - 3 * 3600_000;
    await postWebhook(p.url(), webhookBody([textMessageAt('+15550107070', 'status of order 1001', wroteAt)]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    const c = await p.services.store.customers.findBy('phone', '+15550107070');
    expect(c?.lastInboundAt?.whatsapp).toBe(Math.floor(wroteAt / 1000) * 1000);
    // a timestamp in the future is bounded by now
    await postWebhook(p.url(), webhookBody([textMessageAt('+15550107070', 'status of order 2002', Date.now() + 3600_000)]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
    );
    const after = await p.services.store.customers.findBy('phone', '+15550107070');
    expect(after!.lastInboundAt!.whatsapp!).toBeLessThanOrEqual(Date.now());
  });
});

describe('confirmations', () => {
  it('the inbound job of a button reply that already confirmed runs again (crash before its completion was recorded) → no second reply', async () => {
    const { p, graph, invoked } = await setup();
    await postWebhook(p.url(), webhookBody([textMessage('+15550108080', 'cancel order 1001')]));
    const [prompt] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    const yes = prompt.body.interactive.action.buttons[0].reply.id as string;
    const reply = buttonReply('+15550108080', yes, 'Yes');
    await postWebhook(p.url(), webhookBody([reply]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
    );
    await until(
      () => p.runtime.whatsapp.inbound.depth(),
      (d) => d === 0,
    );
    // The same inbound message handled again, as after a crash between the confirm's commit and the job's.
    const [again] = (await import('../../src/whatsapp/webhook-payload.ts')).parseWebhook(webhookBody([reply])).messages;
    await p.runtime.whatsapp.inbound.enqueue(again, { id: 'replayed-after-crash' });
    await p.runtime.whatsapp.inbound.idle();
    // Handled: its job is done. Had it become a message (or a notice), its conversation would now be gathering or
    // answering, or its send queued: wait until the conversation is idle and nothing is left to send.
    const wa = p.runtime.whatsapp.outboundQueue;
    await until(
      () => ({ states: p.runtime.host.list().map((c) => c.state), sending: wa.depth() + wa.inFlight() }),
      (now) => now.states.every((state) => state === 'idle') && now.sending === 0,
    );
    expect(graph.delivered()).toHaveLength(2);
    expect(invoked).toEqual([{ name: 'cancelOrder', args: { orderId: '1001' } }]);
  });
});

describe('identity', () => {
  it('a phone linked to an existing customer: its WhatsApp messages join that customer, and proactive by externalId reaches the phone', async () => {
    const { p, graph } = await setup({ proactive: true });
    const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
    const customers = (await import('../../src/customers/repo.ts')).createCustomerRepo(p.services.store, p.services.clock);
    const crm = await customers.upsert({ externalId: 'crm-42', email: 'x@example.com' });
    const link = await fetch(`${p.url()}/customers/link`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ externalId: 'crm-42', phone: '+1 555 010 9090' }),
    });
    expect(link.status).toBe(200);
    expect(await link.json()).toEqual({ customerId: crm.customerId, externalId: 'crm-42', phone: '+15550109090' });
    await postWebhook(p.url(), webhookBody([textMessage('+15550109090', 'status of order 1001')]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    expect(await p.runtime.host.record(conversationIdFor(crm.customerId, 'whatsapp'))).toMatchObject({ customerId: crm.customerId, externalId: 'crm-42' });
    expect((await allCustomers(p)).map((c) => c.externalId)).toEqual(['crm-42']);
    await fetch(`${p.url()}/proactive/opt-in`, { method: 'POST', headers: auth, body: JSON.stringify({ customerExternalId: 'crm-42', optIn: true }) });
    const sent = await (
      await fetch(`${p.url()}/proactive`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ customerExternalId: 'crm-42', channel: 'whatsapp', content: 'Your order shipped' }),
      })
    ).json();
    expect(sent).toMatchObject({ accepted: true });
    const out = await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
    );
    expect(out[1].body).toMatchObject({ to: '15550109090', text: { body: 'Your order shipped' } });
    // a second customer can't take the phone (409), checked in the linking transaction
    await customers.upsert({ externalId: 'crm-43' });
    const taken = await fetch(`${p.url()}/customers/link`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ externalId: 'crm-43', phone: '+15550109090' }),
    });
    expect(taken.status).toBe(409);
  });
});

describe('test mode', () => {
  it('with WA_PHONE_ID/WA_TOKEN set and the default graph_url, test mode uses the mock sender (never Meta)', async () => {
    const p = await startParley({ config: { channels: { whatsapp: { enabled: true, provider: 'meta', ...WA } } } });
    open.push(p);
    expect((await p.runtime.whatsapp.diagnostics()).sender).toBe('mock');
    await postWebhook(p.url(), webhookBody([textMessage('+15550100101', 'hello')]));
    const box = await until(
      async () => (await fetch(`${p.url()}/__test__/whatsapp/outbox`)).json(),
      (b: { messages: unknown[] }) => b.messages.length >= 1,
    );
    expect(box.messages[0]).toMatchObject({ to: '+15550100101', type: 'text' });
  });
});
