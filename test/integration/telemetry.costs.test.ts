// Issue 39 part 3: what conversations cost. A fake OpenAI endpoint reports a known number of tokens for each call;
// at the configured prices, the telemetry API (per turn, conversation, customer, day, and the summary) and /metrics
// show the exact cost. WhatsApp messages are priced from the category Meta reports in their `sent` status.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigSchema } from '../../src/config/schema.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { parsePrometheusText } from '../support/prom-text.ts';
import { startWidgetSession } from '../support/widget-client.ts';

let p: TestParley;
let llm: FakeOpenAi;
const get = async (path: string) => {
  const res = await fetch(`${p.url()}${path}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  return { status: res.status, body: (await res.json()) as any };
};

// Prices per million tokens; the endpoint answers with a dated snapshot of the configured model, as OpenAI does.
const PRICES = { 'fake-model': { prompt: 2, cached_prompt: 0.5, completion: 8 } };
const SNAPSHOT = 'fake-model-2026-01-01';
// Per turn: (prompt × 2 + completion × 8) / 1e6.
const A1 = 0.004; // 1000 prompt, 250 completion
const A2 = 0.0038; // 3000 prompt of which 2000 cached, 100 completion
const B1 = 0.0014; // 500 prompt, 50 completion

async function turn(customerId: string, id: string, text: string) {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  try {
    w.send({ type: 'message', id, text });
    await w.next((f) => f.type === 'message');
  } finally {
    w.close();
  }
}

beforeAll(async () => {
  llm = await startFakeOpenAi();
  llm.script(
    { text: 'One.', model: SNAPSHOT, usage: { prompt: 1000, completion: 250 } },
    { text: 'Two.', model: SNAPSHOT, usage: { prompt: 3000, completion: 100, cached: 2000 } },
    { text: 'Three.', model: SNAPSHOT, usage: { prompt: 500, completion: 50 } },
  );
  p = await startParley({
    config: {
      identity: { allow_anonymous: true },
      llm: { provider: 'openai', base_url: llm.url, model: 'fake-model', prices: PRICES },
      telemetry: { currency: 'EUR' },
    },
  });
  await turn('cost-a', 'a1', 'first question');
  await turn('cost-a', 'a2', 'second question');
  await turn('cost-b', 'b1', 'a question');
  await p.services.telemetry.flush();
}, 60_000);

afterAll(async () => {
  await p?.close();
  await llm?.close();
});

describe('what it cost', () => {
  it('each LLM call records its cost at the configured price (the snapshot priced as its model)', async () => {
    const { body } = await get('/api/v1/telemetry/turn-calls?limit=100');
    expect(body.items.map((c: any) => [c.model, c.promptTokens, c.completionTokens, c.cost])).toEqual([
      [SNAPSHOT, 1000, 250, A1],
      [SNAPSHOT, 3000, 100, A2],
      [SNAPSHOT, 500, 50, B1],
    ]);
  });

  it('the costs API sums them per customer, conversation, turn and day, exactly, in the configured currency', async () => {
    const byCustomer = (await get('/api/v1/telemetry/costs?by=customer')).body;
    expect(byCustomer.currency).toBe('EUR');
    expect(byCustomer.total).toMatchObject({ cost: 0.0092, llm: 0.0092, whatsapp: 0, calls: 3, unpricedCalls: 0, promptTokens: 4500, completionTokens: 400 });
    expect(byCustomer.groups.map((g: any) => [g.key, g.cost])).toEqual([
      ['cost-a', 0.0078],
      ['cost-b', B1],
    ]);
    const byConversation = (await get('/api/v1/telemetry/costs?by=conversation')).body;
    expect(byConversation.groups.map((g: any) => g.cost)).toEqual([0.0078, B1]);
    const byTurn = (await get('/api/v1/telemetry/costs?by=turn&customerId=cost-a')).body;
    expect(byTurn.groups.map((g: any) => [g.key.split(':').pop(), g.cost])).toEqual([
      ['a1', A1],
      ['a2', A2],
    ]);
    expect(byTurn.total.cost).toBe(0.0078);
    const byDay = (await get('/api/v1/telemetry/costs?by=day')).body;
    const days = (await get('/api/v1/telemetry/turn-calls')).body.items.map((c: any) => new Date(c.at).toISOString().slice(0, 10));
    // (the three calls fall on one UTC day unless the test ran across midnight)
    const perDay = [...new Set<string>(days)].map((day) => days.filter((d: string) => d === day).length);
    expect(byDay.groups.map((g: any) => g.key)).toEqual([...new Set(days)]);
    expect(byDay.groups.map((g: any) => g.calls)).toEqual(perDay);
    expect(byDay.total.cost).toBe(0.0092);
  });

  it('the summary and /metrics show the same cost', async () => {
    const summary = (await get('/api/v1/telemetry/summary')).body;
    expect(summary.currency).toBe('EUR');
    expect(summary.cost).toMatchObject({ total: 0.0092, llm: 0.0092, whatsapp: 0, byModel: { [SNAPSHOT]: 0.0092 } });
    expect(summary.cost.series.reduce((a: number, b: number) => a + b, 0)).toBeCloseTo(0.0092, 12);
    const res = await fetch(`${p.url()}/metrics`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    const cost = parsePrometheusText(await res.text()).get('parley_llm_cost_total');
    expect(cost?.samples).toEqual([{ name: 'parley_llm_cost_total', labels: { model: SNAPSHOT }, value: expect.closeTo(0.0092, 12) }]);
  });

  it('a bad query is answered 400 with its code, not 500', async () => {
    for (const q of ['by=week', 'since=yesterday', 'limit=0', 'color=red']) {
      const { status, body } = await get(`/api/v1/telemetry/costs?${q}`);
      expect(status, q).toBe(400);
      expect(body.error.code, q).toEqual(expect.any(String));
    }
  });
});

describe('the README', () => {
  it('"What it cost" configures prices the schema accepts', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### What it cost'));
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(yaml).toContain('prices');
    const config = ConfigSchema.parse(parse(yaml!));
    expect(config.llm.prices['gpt-4o-mini']).toEqual({ prompt: 0.15, cached_prompt: 0.075, completion: 0.6 });
    expect(config.channels.whatsapp.prices.marketing).toBe(0.025);
  });
});
