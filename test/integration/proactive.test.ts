// Issue 6: proactive messaging through the HTTP routes, every guardrail.
import { afterEach, describe, expect, it } from 'vitest';
import { BLOCK_REASONS } from '../../machines/proactive.ts';
import { startFakeGraph, type FakeGraph } from '../support/fake-graph.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget, startWidgetSession } from '../support/widget-client.ts';
import { outboundSettled, postWebhook, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
const post = (p: TestParley, path: string, body: unknown) => fetch(`${p.url()}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
const send = async (p: TestParley, body: Record<string, unknown>) => (await post(p, '/proactive', body)).json();
const optIn = async (p: TestParley, customerExternalId: string, value = true) => post(p, '/proactive/opt-in', { customerExternalId, optIn: value });
const clock = (p: TestParley, offsetMs: number) =>
  fetch(`${p.url()}/__test__/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ offsetMs }) });

async function deliveredCount(graph: FakeGraph, n: number) {
  await expect.poll(() => graph.delivered().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(n);
  expect(graph.delivered()).toHaveLength(n);
}

async function webCustomer(p: TestParley, externalId: string) {
  const { createCustomerRepo } = await import('../../src/customers/repo.ts');
  return createCustomerRepo(p.services.store, p.services.clock).upsert({ externalId, email: `${externalId}@example.com` });
}

async function proactiveParley(extra: Record<string, unknown> = {}) {
  const graph = await startFakeGraph();
  open.push(graph);
  const p = await startParley({
    config: {
      proactive: { enabled: true, daily_cap: 3, dedup_window_hours: 24 },
      channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA } },
      ...extra,
    },
  });
  open.push(p);
  return { p, graph };
}

describe('POST /proactive guardrails', () => {
  it('disabled → "Proactive messaging is disabled" (the route exists anyway)', async () => {
    const p = await startParley({ config: { proactive: { enabled: false } } });
    open.push(p);
    expect(await send(p, { customerExternalId: 'x', channel: 'web', content: 'hi' })).toEqual({ accepted: false, reason: BLOCK_REASONS.disabled });
  });

  it('every reason string, in order of the checks', async () => {
    const { p } = await proactiveParley();
    expect(await send(p, { customerExternalId: 'nobody', channel: 'web', content: 'hi' })).toEqual({ accepted: false, reason: 'Unknown customer' });
    await webCustomer(p, 'ann');
    expect(await send(p, { customerExternalId: 'ann', channel: 'whatsapp', content: 'hi' })).toEqual({ accepted: false, reason: 'No channel address' });
    expect(await send(p, { customerExternalId: 'ann', channel: 'web', content: 'hi' })).toEqual({ accepted: false, reason: 'Customer has not opted in' });
    expect(await (await optIn(p, 'ann')).json()).toEqual({ customerExternalId: 'ann', optIn: true });
    const first = await send(p, { customerExternalId: 'ann', channel: 'web', content: 'Your order shipped', dedupKey: 'ship-1001' });
    expect(first).toEqual({ accepted: true, messageId: expect.any(String) });
    expect(await send(p, { customerExternalId: 'ann', channel: 'web', content: 'Your order shipped', dedupKey: 'ship-1001' })).toEqual({
      accepted: false,
      reason: 'Duplicate (dedupKey already sent)',
    });
    expect((await send(p, { customerExternalId: 'ann', channel: 'web', content: 'two' })).accepted).toBe(true);
    expect((await send(p, { customerExternalId: 'ann', channel: 'web', content: 'three' })).accepted).toBe(true);
    expect(await send(p, { customerExternalId: 'ann', channel: 'web', content: 'four' })).toEqual({ accepted: false, reason: 'Daily proactive limit reached' });
  });

  it('opt-in true then false blocks again; unknown customer → 404; bad body → 400', async () => {
    const { p } = await proactiveParley();
    await webCustomer(p, 'bob');
    await optIn(p, 'bob', true);
    expect((await send(p, { customerExternalId: 'bob', channel: 'web', content: 'x' })).accepted).toBe(true);
    expect(await (await optIn(p, 'bob', false)).json()).toEqual({ customerExternalId: 'bob', optIn: false });
    expect(await send(p, { customerExternalId: 'bob', channel: 'web', content: 'y' })).toEqual({ accepted: false, reason: 'Customer has not opted in' });
    const unknown = await optIn(p, 'ghost');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toEqual({ code: 'unknown_customer', message: 'Unknown customer' });
    const bad = await post(p, '/proactive', { customerExternalId: 'bob', channel: 'sms', content: 'x' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/body\.channel/);
  });

  it('WhatsApp 24-hour window with the test clock; a template passes outside it and reaches Graph as a template', async () => {
    const { p, graph } = await proactiveParley();
    await postWebhook(p.url(), webhookBody([textMessage('+15550007001', 'hello')]));
    await deliveredCount(graph, 1); // answered: the customer exists
    await optIn(p, '+15550007001');
    expect((await send(p, { customerExternalId: '+15550007001', channel: 'whatsapp', content: 'inside the window' })).accepted).toBe(true);
    await deliveredCount(graph, 2);
    await outboundSettled(p.url());
    await clock(p, 24 * 3600_000 + 60_000);
    expect(await send(p, { customerExternalId: '+15550007001', channel: 'whatsapp', content: 'outside' })).toEqual({
      accepted: false,
      reason: 'Outside 24h window — a template message is required',
    });
    const t = await send(p, {
      customerExternalId: '+15550007001',
      channel: 'whatsapp',
      content: 'shipped',
      template: { name: 'order_shipped', language: 'en_US', parameters: ['1001'] },
    });
    expect(t.accepted).toBe(true);
    await deliveredCount(graph, 3);
    expect(graph.delivered().map((r) => r.body.type)).toEqual(['text', 'text', 'template']);
    const tpl = graph.delivered().find((r) => r.body.type === 'template')!;
    expect(tpl.body).toMatchObject({
      to: '15550007001',
      type: 'template',
      template: { name: 'order_shipped', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '1001' }] }] },
    });
  });

  it('the daily cap counts the last 24 hours (test clock)', async () => {
    const { p } = await proactiveParley();
    await webCustomer(p, 'cap');
    await optIn(p, 'cap');
    for (let i = 0; i < 3; i++) expect((await send(p, { customerExternalId: 'cap', channel: 'web', content: `m${i}` })).accepted).toBe(true);
    expect((await send(p, { customerExternalId: 'cap', channel: 'web', content: 'm4' })).reason).toBe('Daily proactive limit reached');
    await clock(p, 23 * 3600_000);
    expect((await send(p, { customerExternalId: 'cap', channel: 'web', content: 'm5' })).reason).toBe('Daily proactive limit reached');
    await clock(p, 24 * 3600_000 + 1000);
    expect((await send(p, { customerExternalId: 'cap', channel: 'web', content: 'm6' })).accepted).toBe(true);
  });

  it('200 concurrent requests with one dedupKey → exactly one accepted; 100 distinct with cap 3 → exactly 3', async () => {
    const { p } = await proactiveParley({ proactive: { enabled: true, daily_cap: 1000, dedup_window_hours: 24 } });
    await webCustomer(p, 'c1');
    await optIn(p, 'c1');
    const same = await Promise.all(Array.from({ length: 200 }, () => send(p, { customerExternalId: 'c1', channel: 'web', content: 'x', dedupKey: 'k' })));
    expect(same.filter((r) => r.accepted)).toHaveLength(1);
    expect(same.filter((r) => r.reason === 'Duplicate (dedupKey already sent)')).toHaveLength(199);
    await p.close();
    const p2 = await startParley({ storagePath: p.storagePath, config: { proactive: { enabled: true, daily_cap: 3 } } });
    open.push(p2);
    await webCustomer(p2, 'c2');
    await optIn(p2, 'c2');
    const distinct = await Promise.all(
      Array.from({ length: 100 }, (_, i) => send(p2, { customerExternalId: 'c2', channel: 'web', content: `m${i}`, dedupKey: `d${i}` })),
    );
    expect(distinct.filter((r) => r.accepted)).toHaveLength(3);
    // after a restart the key and the cap still hold
    expect(await send(p2, { customerExternalId: 'c1', channel: 'web', content: 'x', dedupKey: 'k' })).toEqual({
      accepted: false,
      reason: 'Duplicate (dedupKey already sent)',
    });
    await p2.close();
    const p3 = await startParley({ storagePath: p.storagePath, config: { proactive: { enabled: true, daily_cap: 3 } } });
    open.push(p3);
    expect((await send(p3, { customerExternalId: 'c2', channel: 'web', content: 'again', dedupKey: 'new' })).reason).toBe('Daily proactive limit reached');
  });

  it('web: appears at once in a connected widget, and on the next ready for a disconnected customer', async () => {
    const { p } = await proactiveParley();
    const w = await startWidgetSession(p.url(), { customerId: 'live', email: 'live@example.com' });
    open.push(w);
    await optIn(p, 'anon:live'); // an anonymous visitor's externalId is in its own namespace
    const r = await send(p, { customerExternalId: 'anon:live', channel: 'web', content: 'Your order has shipped' });
    const frame = await w.next((f) => f.type === 'message');
    expect(frame).toMatchObject({ id: r.messageId, role: 'assistant', text: 'Your order has shipped', proactive: true });
    w.close();
    const r2 = await send(p, { customerExternalId: 'anon:live', channel: 'web', content: 'It was delivered' });
    const w2 = await connectWidget(p.url());
    open.push(w2);
    w2.send({ type: 'init', customerId: 'live', email: 'live@example.com' });
    const ready = await w2.next((f) => f.type === 'ready');
    expect(ready.history.map((h: { id: string; proactive?: boolean }) => [h.id, h.proactive])).toEqual([
      [r.messageId, true],
      [r2.messageId, true],
    ]);
  });

  it('a customer with a phone but the WhatsApp channel disabled → "No channel address" (the web channel still works)', async () => {
    const p = await startParley({ config: { proactive: { enabled: true, daily_cap: 3 }, channels: { whatsapp: { enabled: false } } } });
    open.push(p);
    const { createCustomerRepo } = await import('../../src/customers/repo.ts');
    await createCustomerRepo(p.services.store, p.services.clock).upsert({ externalId: 'phoned', phone: '+15550007009' });
    await optIn(p, 'phoned');
    const r = await post(p, '/proactive', { customerExternalId: 'phoned', channel: 'whatsapp', content: 'hi', template: { name: 't', language: 'en' } });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ accepted: false, reason: 'No channel address' });
    expect((await send(p, { customerExternalId: 'phoned', channel: 'web', content: 'hi' })).accepted).toBe(true);
  });

  it('an in-window WhatsApp proactive text reaches the Graph API as type text', async () => {
    const { p, graph } = await proactiveParley();
    await postWebhook(p.url(), webhookBody([textMessage('+15550007002', 'hello')]));
    await expect.poll(() => graph.delivered().length, { timeout: 15_000 }).toBeGreaterThan(0);
    await optIn(p, '+15550007002');
    const before = graph.delivered().length;
    expect((await send(p, { customerExternalId: '+15550007002', channel: 'whatsapp', content: 'Your order has shipped' })).accepted).toBe(true);
    await expect.poll(() => graph.delivered().length, { timeout: 15_000 }).toBeGreaterThan(before);
    const sent = graph.delivered().find((r) => r.body.type === 'text' && (r.body.text as { body?: string })?.body === 'Your order has shipped');
    expect(sent?.body).toMatchObject({ to: '15550007002', type: 'text', text: { body: 'Your order has shipped' } });
  });

  it('a web customer who never connected sees the proactive message on the first ready', async () => {
    const { p } = await proactiveParley();
    // The integrator's customer signs in the usual way (magic link → session token) but has not opened the widget yet.
    const headers = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
    const { url } = await (
      await fetch(`${p.url()}/auth/magic-link`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ email: 'never-seen@example.com', externalId: 'never-seen' }),
      })
    ).json();
    const session = await (await fetch(url)).json();
    await optIn(p, 'never-seen');
    const r = await send(p, { customerExternalId: 'never-seen', channel: 'web', content: 'Welcome aboard' });
    expect(r.accepted).toBe(true);
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: session.customerId, authToken: session.sessionToken });
    const ready = await w.next((f) => f.type === 'ready');
    expect(ready.history).toEqual([expect.objectContaining({ id: r.messageId, role: 'assistant', text: 'Welcome aboard', proactive: true })]);
  });

  it('needs the service secret', async () => {
    const { p } = await proactiveParley();
    const r = await fetch(`${p.url()}/proactive`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(401);
  });
});
