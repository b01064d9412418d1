// Issue 7: records the first scripted conversation does not reach — confirmations
// denied and expired, proactive outcomes, producer-given times, filters, the
// default page size, the customer resolution of the events route — and /metrics
// read by a strict Prometheus text parser.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { parsePrometheusText, sampleValue } from '../support/prom-text.ts';
import { connectWidget } from '../support/widget-client.ts';

let p: TestParley;
let llm: FakeOpenAi;
let sdk: ReturnType<typeof createClient>;
const conv = 'conv_web_rec-1';
const auth = { authorization: `Bearer ${TEST_SECRET}` };

const get = (path: string) => fetch(`${p.url()}${path}`, { headers: auth });
const page = async (path: string) => (await (await get(path)).json()) as { items: any[]; nextCursor: string | null };
const post = (path: string, body: unknown) =>
  fetch(`${p.url()}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const metrics = async () => parsePrometheusText(await (await get('/metrics')).text());

beforeAll(async () => {
  llm = await startFakeOpenAi();
  llm.script(
    { toolCalls: [{ name: 'cancelOrder', args: { orderId: '7' } }] },
    { text: 'Not cancelled.' },
    { toolCalls: [{ name: 'cancelOrder', args: { orderId: '8' } }] },
    { text: 'The confirmation expired.' },
  );
  p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-model' }, proactive: { enabled: true } } });
  sdk = createClient();
  sdk.expose(
    'cancelOrder',
    { description: 'Cancel', parameters: z.object({ orderId: z.string() }), mode: 'write' },
    async ({ orderId }: { orderId: string }) => ({ orderId, status: 'cancelled' }),
  );
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  const w = await connectWidget(p.url());
  w.send({ type: 'init', customerId: 'rec-1', email: 'r@example.com' });
  await w.next((f) => f.type === 'ready');
  w.send({ type: 'message', id: 'a', text: 'cancel 7' });
  const c1 = await w.next((f) => f.type === 'confirm');
  w.send({ type: 'confirm', id: c1.id, approve: false });
  await w.next((f) => f.type === 'message');
  w.send({ type: 'message', id: 'b', text: 'cancel 8' });
  await w.next((f) => f.type === 'confirm');
  // Nobody answers: move the process clock past confirmation_timeout_seconds (300).
  expect((await post('/__test__/clock', { offsetMs: 301_000 })).status).toBe(200);
  await w.next((f) => f.type === 'message' && f.text === 'The confirmation expired.');
  w.close();
}, 30_000);

afterAll(async () => {
  await sdk?.close();
  await p?.close();
  await llm?.close();
});

describe('events API', () => {
  it('confirmation.denied and confirmation.expired, with the tool and turn', async () => {
    const denied = await page('/api/v1/telemetry/events?type=confirmation.denied&customerExternalId=anon:rec-1');
    expect(denied.items).toHaveLength(1);
    expect(denied.items[0]).toMatchObject({ conversationId: conv, data: { name: 'cancelOrder', turnId: `${conv}:a` } });
    const expired = await page('/api/v1/telemetry/events?type=confirmation.expired&customerExternalId=anon:rec-1');
    expect(expired.items).toHaveLength(1);
    expect(expired.items[0]).toMatchObject({ conversationId: conv, data: { name: 'cancelOrder', turnId: `${conv}:b` } });
  });

  it('filters events by turnId', async () => {
    const { items } = await page(`/api/v1/telemetry/events?turnId=${encodeURIComponent(`${conv}:a`)}&limit=1000`);
    expect(items.length).toBeGreaterThanOrEqual(4);
    expect(items.every((e) => e.data.turnId === `${conv}:a`)).toBe(true);
    expect(items.map((e) => e.type)).toEqual(
      expect.arrayContaining(['message.in', 'confirmation.requested', 'confirmation.denied', 'message.out', 'turn.ended']),
    );
    // The turn's start travels on turn.ended (one record per turn fewer).
    expect(items.map((e) => e.type)).not.toContain('turn.started');
    const ended = items.find((e) => e.type === 'turn.ended');
    const messageIn = items.find((e) => e.type === 'message.in');
    expect(ended.data.startedAt).toBeGreaterThanOrEqual(messageIn.at);
    expect(ended.data.startedAt).toBeLessThanOrEqual(ended.at);
  });

  it('customerExternalId finds events that carry only the resolved customerId', async () => {
    const customers = createCustomerRepo(p.services.store, p.services.clock);
    await customers.upsert({ externalId: 'ext-77', customerId: 'cus_77' });
    // A WhatsApp delivery status knows the customer by id only.
    p.services.telemetry.event({ type: 'whatsapp.status', customerId: 'cus_77', channel: 'whatsapp', data: { status: 'delivered' } });
    p.services.telemetry.event({ type: 'whatsapp.dead_letter', customerExternalId: 'ext-77', channel: 'whatsapp', data: { jobId: 'j1' } });
    p.services.telemetry.event({ type: 'whatsapp.status', customerId: 'cus_other', channel: 'whatsapp', data: { status: 'read' } });
    const { items } = await page('/api/v1/telemetry/events?customerExternalId=ext-77');
    expect(items.map((e) => e.type).sort()).toEqual(['whatsapp.dead_letter', 'whatsapp.status']);
    expect((await page('/api/v1/telemetry/events?customerExternalId=nobody')).items).toEqual([]);
  });

  it('returns 100 records when no limit is given, and a cursor to the rest', async () => {
    for (let i = 0; i < 130; i++) p.services.telemetry.event({ type: 'bulk.test', data: { i } });
    const first = await page('/api/v1/telemetry/events?type=bulk.test');
    expect(first.items).toHaveLength(100);
    expect(first.items.map((e) => e.data.i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(first.nextCursor).not.toBeNull();
    const rest = await page(`/api/v1/telemetry/events?type=bulk.test&cursor=${first.nextCursor}`);
    expect(rest.items.map((e) => e.data.i)).toEqual(Array.from({ length: 30 }, (_, i) => 100 + i));
    expect(rest.nextCursor).toBeNull();
  });

  it('a producer-given `at` is the record time: ids follow it, stay unique, and time filters use it', async () => {
    const now = p.services.clock.now();
    const t = p.services.telemetry;
    t.event({ type: 'at.test', at: now - 5000, data: { n: 'late-recorded' } });
    t.event({ type: 'at.test', data: { n: 'now' } });
    t.event({ type: 'at.test', at: now - 9000, data: { n: 'earliest' } });
    t.event({ type: 'at.test', at: now - 5000, data: { n: 'same-ms' } });
    const { items } = await page('/api/v1/telemetry/events?type=at.test');
    expect(items.map((e) => e.data.n)).toEqual(['earliest', 'late-recorded', 'same-ms', 'now']);
    expect(items.map((e) => e.at)).toEqual([now - 9000, now - 5000, now - 5000, expect.any(Number)]);
    expect(new Set(items.map((e) => e.id)).size).toBe(4);
    for (const e of items) expect(e.id.startsWith(String(e.at).padStart(13, '0'))).toBe(true);
    const window = await page(`/api/v1/telemetry/events?type=at.test&since=${now - 6000}&until=${now - 4000}`);
    expect(window.items.map((e) => e.data.n)).toEqual(['late-recorded', 'same-ms']);
  });
});

describe('proactive events', () => {
  it('blocked (with its reason) and accepted are recorded and counted', async () => {
    const blocked = await (await post('/proactive', { customerExternalId: 'anon:rec-1', channel: 'web', content: 'Your order shipped' })).json();
    expect(blocked).toEqual({ accepted: false, reason: 'Customer has not opted in' });
    expect((await post('/proactive/opt-in', { customerExternalId: 'anon:rec-1', optIn: true })).status).toBe(200);
    expect((await (await post('/proactive', { customerExternalId: 'anon:rec-1', channel: 'web', content: 'Your order shipped' })).json()).accepted).toBe(true);
    const { items } = await page('/api/v1/telemetry/events?type=proactive.*&customerExternalId=anon:rec-1');
    expect(items.map((e) => e.type)).toEqual(['proactive.blocked', 'proactive.accepted']);
    expect(items[0].data).toMatchObject({ reason: 'Customer has not opted in' });
    const m = await metrics();
    expect(sampleValue(m, 'parley_proactive_total', { outcome: 'blocked', reason: 'Customer has not opted in' })).toBe(1);
    expect(sampleValue(m, 'parley_proactive_total', { outcome: 'accepted' })).toBe(1);
  });
});

describe('/metrics', () => {
  it('every line parses as Prometheus text; every family of issue 7 is there; counters move with a turn', async () => {
    const before = await metrics();
    const families: [string, string][] = [
      ['parley_turns_total', 'counter'],
      ['parley_turn_duration_seconds', 'histogram'],
      ['parley_llm_call_duration_seconds', 'histogram'],
      ['parley_llm_tokens_total', 'counter'],
      ['parley_tool_calls_total', 'counter'],
      ['parley_proactive_total', 'counter'],
      ['parley_whatsapp_queue_depth', 'gauge'],
      ['parley_whatsapp_delivery_total', 'counter'],
      ['parley_active_conversations', 'gauge'],
      ['parley_sdk_connections', 'gauge'],
      ['parley_event_loop_lag_seconds', 'gauge'],
    ];
    for (const [name, type] of families) expect(before.get(name)?.type, name).toBe(type);
    expect(before.get('parley_llm_call_duration_seconds')!.samples.some((s) => s.labels.model === 'fake-model' && s.name.endsWith('_bucket'))).toBe(true);
    expect(sampleValue(before, 'parley_tool_calls_total', { name: 'cancelOrder', outcome: 'ok' })).toBeUndefined();
    expect(sampleValue(before, 'parley_sdk_connections')).toBe(1);
    expect(sampleValue(before, 'parley_whatsapp_queue_depth', { queue: 'outbound' })).toBe(0);
    expect(sampleValue(before, 'parley_event_loop_lag_seconds', { quantile: '0.99' })).toBeGreaterThanOrEqual(0);

    const turns = sampleValue(before, 'parley_turns_total', { channel: 'web' })!;
    const tokens = sampleValue(before, 'parley_llm_tokens_total', { model: 'fake-model', kind: 'completion' })!;
    const histCount = sampleValue(before, 'parley_turn_duration_seconds_count', { channel: 'web' })!;
    expect(turns).toBeGreaterThanOrEqual(2);
    const w = await connectWidget(p.url());
    w.send({ type: 'init', customerId: 'rec-1', email: 'r@example.com' });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'c', text: 'hello again' });
    await w.next((f) => f.type === 'message' && f.role !== 'user' && !f.proactive);
    w.close();
    const after = await metrics();
    expect(sampleValue(after, 'parley_turns_total', { channel: 'web' })).toBe(turns + 1);
    expect(sampleValue(after, 'parley_turn_duration_seconds_count', { channel: 'web' })).toBe(histCount + 1);
    expect(sampleValue(after, 'parley_llm_tokens_total', { model: 'fake-model', kind: 'completion' })).toBeGreaterThan(tokens);
  });

  it('the parser is strict', () => {
    expect(() => parsePrometheusText('# TYPE x counter\nx{a="1"} 1\n')).not.toThrow();
    expect(() => parsePrometheusText('y 1\n')).toThrow(/undeclared/);
    expect(() => parsePrometheusText('# TYPE x counter\nx{a=1} 1\n')).toThrow(/not Prometheus/);
    expect(() => parsePrometheusText('# TYPE x counter\nx one\n')).toThrow(/bad value/);
  });
});
