// Issue 19: signed outbound webhooks over real sockets. A local receiver checks every signature with the SDK's
// verifyWebhook; deliveries come from the durable job queue (real LMDB), across a restart of Parley.
import { afterEach, describe, expect, it } from 'vitest';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { parsePrometheusText, sampleValue } from '../support/prom-text.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const HOOK_SECRET = 'hook-secret-0123456789abcdef';
const auth = { authorization: `Bearer ${TEST_SECRET}` };

async function post(p: TestParley, path: string, body: unknown) {
  const res = await fetch(`${p.url()}${path}`, {
    method: 'POST',
    headers: Object.assign({ 'content-type': 'application/json' }, auth),
    body: JSON.stringify(body),
  });
  expect(res.status).toBeLessThan(300);
  return res.json();
}

const until = async (what: string, check: () => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

const attemptsOf = (r: WebhookReceiver, id: string) => r.received.filter((x) => x.event?.id === id);

describe('outbound webhooks', () => {
  it('a receiver failing five times then succeeding gets each event exactly once, signed, with growing gaps; a restart mid-retries loses none', async () => {
    const receiver = await startWebhookReceiver({ secret: HOOK_SECRET, respond: (_e, attempt) => (attempt <= 5 ? 503 : 200) });
    open.push(receiver);
    const config = { webhooks: { allow_private: true, endpoints: [{ url: receiver.url, secret: HOOK_SECRET }] }, webhooks_retry_base_ms: 200 };
    const first = await startParley({ config });
    const storagePath = first.storagePath;
    let p: TestParley = first;
    try {
      const w = await startWidgetSession(p.url(), { customerId: 'cust-h', email: 'cust-h@example.com' });
      w.send({ type: 'message', id: 'm1', text: 'I want to talk to a person' });
      await w.next((f) => f.type === 'status' && f.mode === 'human');
      await post(p, '/conversations/conv_web_cust-h/messages', { text: 'Alex here', author: { name: 'Alex' } });
      await post(p, '/conversations/conv_web_cust-h/release', {});
      await w.next((f) => f.type === 'status' && f.mode === 'assistant');
      w.close();
      // The handoff decides the conversation's outcome too (issue 39): `conversation.outcome` comes with it.
      const types = ['message.customer', 'handoff.requested', 'message.agent', 'handoff.released', 'conversation.outcome'];
      await until('two attempts of every event', () => types.every((t) => receiver.received.filter((r) => r.event?.type === t).length >= 2));
      // Parley stops in the middle of the retries and comes back on the same data.
      await first.close();
      p = await startParley({ config, storagePath });
      await until('every event delivered', () => types.every((t) => receiver.delivered().some((e) => e.type === t)), 60_000);
      await new Promise((r) => setTimeout(r, 500)); // nothing more arrives
    } finally {
      await p.close();
    }
    expect(receiver.received.filter((r) => r.error)).toEqual([]); // every signature verified
    const events = new Map(receiver.received.map((r) => [r.event!.id, r.event!]));
    expect([...events.values()].map((e) => e.type).sort()).toEqual([
      'conversation.outcome',
      'handoff.released',
      'handoff.requested',
      'message.agent',
      'message.customer',
    ]);
    for (const [id, event] of events) {
      const tries = attemptsOf(receiver, id);
      // Exactly once delivered (the sixth attempt), the same event every time.
      expect(tries.map((t) => t.status)).toEqual([503, 503, 503, 503, 503, 200]);
      expect(tries.every((t) => JSON.stringify(t.event) === JSON.stringify(event))).toBe(true);
      // Retry n waits at least half of base × 2^(n-1) (equal jitter): 100, 200, 400, 800, 1600 ms. Load and the restart
      // can only make a gap longer (less the difference of two deliveries' latencies: 20 % slack).
      const gaps = tries.slice(1).map((t, i) => t.arrivedAt - tries[i].arrivedAt);
      gaps.forEach((gap, i) => expect(gap, `gaps of ${event.type}: ${gaps.join(', ')}`).toBeGreaterThanOrEqual(0.8 * 100 * 2 ** i));
    }
    const requested = [...events.values()].find((e) => e.type === 'handoff.requested')!;
    expect(requested.data).toMatchObject({ conversationId: 'conv_web_cust-h', customerId: 'cust-h', channel: 'web', source: 'model' });
    expect([...events.values()].find((e) => e.type === 'message.agent')!.data).toMatchObject({ text: 'Alex here', author: { name: 'Alex' } });
    expect([...events.values()].find((e) => e.type === 'message.customer')!.data).toMatchObject({ text: 'I want to talk to a person', messageId: 'm1' });
  });

  it('a receiver that never answers 2xx: retried until webhooks_retry_hours, then dead-lettered, counted and listed; `events` filters', async () => {
    const receiver = await startWebhookReceiver({ secret: HOOK_SECRET, respond: () => 500 });
    open.push(receiver);
    const other = await startWebhookReceiver({ secret: 'another-secret-0123456789' });
    open.push(other);
    const p = await startParley({
      config: {
        // 1.8 s of retries
        webhooks_retry_hours: 0.0005,
        webhooks_retry_base_ms: 100,
        webhooks: {
          allow_private: true,
          endpoints: [
            { url: receiver.url, secret: HOOK_SECRET, events: ['handoff.requested'] },
            { url: other.url, secret: 'another-secret-0123456789', events: ['message.customer'] },
          ],
        },
      },
    });
    open.push(p);
    const w = await startWidgetSession(p.url(), { customerId: 'cust-d', email: 'cust-d@example.com' });
    open.push(w);
    w.send({ type: 'message', id: 'm1', text: 'operator please' });
    await w.next((f) => f.type === 'status' && f.mode === 'human');
    const deliveries = async () => (await (await fetch(`${p.url()}/api/v1/webhooks/deliveries`, { headers: auth })).json()) as any;
    await until('a first attempt', () => receiver.received.length > 0, 10_000);
    let view: any;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      view = await deliveries();
      if (view.counts.dead > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(view.counts).toMatchObject({ dead: 1, retrying: 0, delivered: 1 });
    expect(view.dead).toEqual([
      expect.objectContaining({ type: 'handoff.requested', url: receiver.url, error: expect.stringMatching(/gave up after .*HTTP 500/) }),
    ]);
    expect(receiver.received.length).toBeGreaterThan(2);
    expect(new Set(receiver.received.map((r) => r.event!.type))).toEqual(new Set(['handoff.requested']));
    expect(other.delivered().map((e) => e.type)).toEqual(['message.customer']);
    // The dead letter is stored before the worker counts it: on a loaded machine the list can show it first.
    let metrics = parsePrometheusText(await (await fetch(`${p.url()}/metrics`, { headers: auth })).text());
    for (const end = Date.now() + 15_000; sampleValue(metrics, 'parley_webhook_deliveries_total', { outcome: 'dead' }) !== 1 && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 100));
      metrics = parsePrometheusText(await (await fetch(`${p.url()}/metrics`, { headers: auth })).text());
    }
    expect(sampleValue(metrics, 'parley_webhook_deliveries_total', { outcome: 'dead' })).toBe(1);
    expect(sampleValue(metrics, 'parley_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
    expect(sampleValue(metrics, 'parley_webhook_deliveries_total', { outcome: 'failed_attempt' })).toBeGreaterThan(2);
    expect(sampleValue(metrics, 'parley_handoffs_total', { event: 'requested' })).toBe(1);
    expect(sampleValue(metrics, 'parley_conversations_with_human')).toBe(1);
    expect((await fetch(`${p.url()}/api/v1/webhooks/deliveries`)).status).toBe(401);
  });
});
