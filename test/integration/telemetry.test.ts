// Issue 7: events and turn-call records after a scripted conversation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { parsePrometheusText } from '../support/prom-text.ts';
import { connectWidget } from '../support/widget-client.ts';

let p: TestParley;
let llm: FakeOpenAi;
let sdk: ReturnType<typeof createClient>;
const conv = 'conv_web_tele-1';

const get = (path: string, headers: Record<string, string> = { authorization: `Bearer ${TEST_SECRET}` }) => fetch(`${p.url()}${path}`, { headers });
const items = async (path: string) => (await (await get(path)).json()) as { items: any[]; nextCursor: string | null };

beforeAll(async () => {
  llm = await startFakeOpenAi();
  llm.script(
    { toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] },
    { text: 'Order 1001 shipped.' },
    { toolCalls: [{ name: 'cancelOrder', args: { orderId: '1001' } }] },
    { text: 'Cancelled.' },
    { toolCalls: [{ name: 'refund', args: { orderId: '1001' } }] },
    { text: 'Sorry, the refund failed.' },
  );
  p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-model' } } });
  sdk = createClient();
  sdk.expose('getOrderStatus', { description: 'Order status', parameters: z.object({ orderId: z.string() }) }, async ({ orderId }: { orderId: string }) => ({
    orderId,
    status: 'shipped',
  }));
  sdk.expose(
    'cancelOrder',
    { description: 'Cancel', parameters: z.object({ orderId: z.string() }), mode: 'write' },
    async ({ orderId }: { orderId: string }) => ({ orderId, status: 'cancelled' }),
  );
  sdk.expose('refund', { description: 'Refund', parameters: z.object({ orderId: z.string() }) }, async () => {
    throw new Error('payment provider down');
  });
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  const w = await connectWidget(p.url());
  w.send({ type: 'init', customerId: 'tele-1', email: 't@example.com' });
  await w.next((f) => f.type === 'ready');
  w.send({ type: 'message', id: 'a', text: 'status 1001' });
  await w.next((f) => f.type === 'message');
  w.send({ type: 'message', id: 'b', text: 'cancel 1001' });
  const c = await w.next((f) => f.type === 'confirm');
  w.send({ type: 'confirm', id: c.id, approve: true });
  await w.next((f) => f.type === 'message');
  w.send({ type: 'message', id: 'c', text: 'refund 1001' });
  await w.next((f) => f.type === 'message');
  w.close();
  await p.services.telemetry.flush();
}, 30_000);

afterAll(async () => {
  await sdk?.close();
  await p?.close();
  await llm?.close();
});

describe('telemetry API', () => {
  it('records the conversation as events with the right fields', async () => {
    const { items: ev } = await items(`/api/v1/telemetry/events?conversationId=${conv}&limit=1000`);
    const types = ev.map((e) => e.type);
    for (const t of [
      'message.in',
      'message.out',
      'turn.ended',
      'tool.invoked',
      'tool.result',
      'tool.failed',
      'confirmation.requested',
      'confirmation.approved',
    ])
      expect(types).toContain(t);
    expect(types.filter((t) => t === 'message.in')).toHaveLength(3);
    expect(types.filter((t) => t === 'message.out')).toHaveLength(3);
    const failed = ev.find((e) => e.type === 'tool.failed');
    expect(failed).toMatchObject({
      id: expect.stringMatching(/^\d{13}-\d{8}$/),
      at: expect.any(Number),
      conversationId: conv,
      customerId: 'tele-1',
      customerExternalId: 'anon:tele-1', // an anonymous visitor's externalId is in its own namespace
      channel: 'web',
      data: { name: 'refund', error: 'payment provider down' },
    });
    for (const t of ['tool.result', 'tool.failed']) expect(typeof ev.find((e) => e.type === t)?.data.durationMs, t).toBe('number');
    const sorted = [...ev].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(ev.map((e) => e.id)).toEqual(sorted.map((e) => e.id));
  });

  it('one turn-call per LLM call with model, tokens, tool calls', async () => {
    const { items: calls } = await items(`/api/v1/telemetry/turn-calls?conversationId=${conv}`);
    expect(calls).toHaveLength(6);
    expect(calls[0]).toMatchObject({
      turnId: `${conv}:a`,
      conversationId: conv,
      customerId: 'tele-1',
      sequence: 1,
      provider: 'openai',
      model: 'fake-model',
      purpose: 'chat',
      ok: true,
      toolCalls: ['getOrderStatus'],
      promptTokens: expect.any(Number),
      completionTokens: 7,
      durationMs: expect.any(Number),
    });
    expect(calls[1]).toMatchObject({ turnId: `${conv}:a`, sequence: 2, toolCalls: [] });
    const byTurn = await items(`/api/v1/telemetry/turn-calls?turnId=${encodeURIComponent(`${conv}:b`)}`);
    expect(byTurn.items.map((c) => c.sequence)).toEqual([1, 2]);
    expect((await items('/api/v1/telemetry/turn-calls?customerExternalId=anon:tele-1')).items).toHaveLength(6);
    expect((await items('/api/v1/telemetry/turn-calls?customerExternalId=nobody')).items).toHaveLength(0);
  });

  it('filters by type (exact and prefix), time, customer', async () => {
    expect((await items('/api/v1/telemetry/events?type=tool.failed')).items).toHaveLength(1);
    expect((await items('/api/v1/telemetry/events?type=tool.*&limit=1000')).items.every((e) => e.type.startsWith('tool.'))).toBe(true);
    expect((await items(`/api/v1/telemetry/events?since=${Date.now() + 60_000}`)).items).toHaveLength(0);
    expect((await items(`/api/v1/telemetry/events?until=${new Date(Date.now() - 3600_000).toISOString()}`)).items).toHaveLength(0);
    expect((await items('/api/v1/telemetry/events?customerId=tele-1&limit=1000')).items.length).toBeGreaterThan(10);
  });

  it('paginates with a cursor: no gaps, no duplicates', async () => {
    const all = (await items('/api/v1/telemetry/events?limit=1000')).items.map((e) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { id: string }[]; nextCursor: string | null } = await items(`/api/v1/telemetry/events?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
    const desc = await items('/api/v1/telemetry/events?limit=3&order=desc');
    expect(desc.items.map((e) => e.id)).toEqual(all.slice(-3).reverse());
  });

  it('401 without the secret, 200 with Bearer or x-service-secret', async () => {
    expect((await get('/api/v1/telemetry/events', {})).status).toBe(401);
    expect((await get('/api/v1/telemetry/events', { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await get('/api/v1/telemetry/turn-calls', { 'x-service-secret': 'wrong' })).status).toBe(401);
    expect((await get('/api/v1/telemetry/turn-calls', { 'x-service-secret': TEST_SECRET })).status).toBe(200);
  });

  it('a bad query → 400 naming the parameter', async () => {
    for (const [q, param] of [
      ['limit=0', 'query.limit'],
      ['limit=5000', 'query.limit'],
      ['limit=abc', 'query.limit'],
      ['since=yesterday', 'query.since'],
      ['cursor=zzz', 'query.cursor'],
      ['bogus=1', 'query'],
    ] as const) {
      const r = await get(`/api/v1/telemetry/events?${q}`);
      expect(r.status, q).toBe(400);
      expect((await r.json()).error.message, q).toContain(param);
    }
  });

  it('/metrics is Prometheus text and its counters move', async () => {
    const text = await (await get('/metrics')).text();
    expect(text).toMatch(/# TYPE parley_turns_total counter/);
    expect(text).toMatch(/parley_turns_total\{channel="web"\} 3/);
    expect(text).toMatch(/parley_tool_calls_total\{name="refund",outcome="failed"\} 1/);
    expect(text).toMatch(/parley_llm_tokens_total\{model="fake-model",kind="completion"\} 42/);
    expect(text).toMatch(/# TYPE parley_turn_duration_seconds histogram/);
    expect(text).toMatch(/parley_event_loop_lag_seconds\{quantile="0.99"\}/);
    expect(text).toMatch(/parley_sdk_connections 1/);
    // prom-client's default process metrics
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect((await get('/metrics', {})).status).toBe(401);
  });

  it('summary aggregates series for the dashboard', async () => {
    const s = await (await get(`/api/v1/telemetry/summary?since=${Date.now() - 3600_000}`)).json();
    expect(s.messages['web in'].reduce((a: number, b: number) => a + b, 0)).toBe(3);
    expect(s.tools.refund).toEqual({ invoked: 1, failed: 1 });
    expect(s.tokens['fake-model'].calls).toBe(6);
    expect(s.confirmations).toMatchObject({ requested: 1, approved: 1 });
    const convs = await (await get('/api/v1/telemetry/conversations')).json();
    expect(convs.items[0]).toMatchObject({ conversationId: conv, state: 'idle' });
    expect(convs.items[0].snapshot).toBeUndefined();
  });
});

describe('metrics_public', () => {
  it('serves /metrics without the secret when telemetry.metrics_public is true', async () => {
    const q = await startParley({ config: { telemetry: { metrics_public: true } } });
    const r = await fetch(`${q.url()}/metrics`);
    expect(r.status).toBe(200);
    // the first scrape of a fresh process parses too (the default metrics' event-loop mean is NaN until a sample)
    const families = parsePrometheusText(await r.text());
    expect(families.get('nodejs_eventloop_lag_mean_seconds')).toBeDefined();
    expect(families.get('process_resident_memory_bytes')?.samples[0].value).toBeGreaterThan(0);
    await q.close();
  });
});

describe('telemetry.store_text', () => {
  const messages = async (q: TestParley) => {
    await q.services.telemetry.flush();
    const r = await fetch(`${q.url()}/api/v1/telemetry/events?type=message.*`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    return ((await r.json()) as { items: { type: string; data: Record<string, unknown> }[] }).items;
  };
  const chat = async (q: TestParley, customerId: string) => {
    const w = await connectWidget(q.url());
    w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'm1', text: 'hello there' });
    await w.next((f) => f.type === 'message');
    w.close();
  };

  it('off by default: message events carry lengths, never the text', async () => {
    const q = await startParley();
    await chat(q, 'no-text');
    const items = await messages(q);
    expect(items.map((e) => e.type).sort()).toEqual(['message.in', 'message.out']);
    for (const e of items) {
      expect(e.data.text).toBeUndefined();
      expect(e.data.length).toEqual(expect.any(Number));
    }
    expect(JSON.stringify(items)).not.toContain('hello there');
    await q.close();
  });

  it('on: message.in and message.out carry the text, for the dashboard timeline', async () => {
    const q = await startParley({ config: { telemetry: { store_text: true } } });
    await chat(q, 'with-text');
    const items = await messages(q);
    expect(items.find((e) => e.type === 'message.in')?.data.text).toBe('hello there');
    expect(items.find((e) => e.type === 'message.out')?.data.text).toEqual(expect.any(String));
    await q.close();
  });
});
