// Issue 7: failed LLM attempts are recorded per attempt; a telemetry write
// failure never fails a turn; retention prunes old records and keeps recent
// ones; a conversation's timeline pages through its own records. (How LMDB
// keeps its index through all this: test/unit/telemetry.index.lmdb.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { parsePrometheusText, sampleValue } from '../support/prom-text.ts';
import { lmdbKv } from '../support/store.ts';
import { queryDatabase } from '../support/stored.ts';
import { connectWidget } from '../support/widget-client.ts';

const auth = { authorization: `Bearer ${TEST_SECRET}` };
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function parley(config: Parameters<typeof startParley>[0] = {}) {
  const p = await startParley(config);
  open.push(p);
  return p;
}
const page = async (p: TestParley, path: string) =>
  (await (await fetch(`${p.url()}${path}`, { headers: auth })).json()) as { items: any[]; nextCursor: string | null };

async function converse(p: TestParley, customerId: string, texts: string[]) {
  const w = await connectWidget(p.url());
  w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  await w.next((f) => f.type === 'ready');
  const replies: string[] = [];
  for (const [i, text] of texts.entries()) {
    w.send({ type: 'message', id: `m${i}`, text });
    replies.push((await w.next((f) => f.type === 'message')).text);
  }
  w.close();
  return replies;
}

describe('failed LLM attempts', () => {
  let llm: FakeOpenAi;
  afterEach(async () => llm?.close());

  it('a 500, its retry failing too, then the fallback answering: two ok:false turn-calls and one ok, in the same turn and step', async () => {
    llm = await startFakeOpenAi();
    llm.script({ status: 500 }, { status: 503 });
    const p = await parley({
      config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-model', max_retries: 1, fallback: { provider: 'offline', model: 'offline-1' } } },
    });
    const [reply] = await converse(p, 'att-1', ['hello']);
    expect(reply).toBeTruthy();
    const turnId = 'conv_web_att-1:m0';
    const { items } = await page(p, `/api/v1/telemetry/turn-calls?turnId=${encodeURIComponent(turnId)}`);
    expect(items.map((c) => [c.provider, c.model, c.ok])).toEqual([
      ['openai', 'fake-model', false],
      ['openai', 'fake-model', false],
      ['offline', 'offline-1', true],
    ]);
    for (const c of items)
      expect(c).toMatchObject({ turnId, conversationId: 'conv_web_att-1', customerId: 'att-1', sequence: 1, purpose: 'chat', durationMs: expect.any(Number) });
    expect(items[0].error).toMatch(/500/);
    expect(items[1].error).toMatch(/503/);
    expect(items[2].error).toBeUndefined();
    const m = parsePrometheusText(await (await fetch(`${p.url()}/metrics`, { headers: auth })).text());
    expect(sampleValue(m, 'parley_llm_calls_total', { model: 'fake-model', purpose: 'chat', outcome: 'error' })).toBe(2);
    expect(sampleValue(m, 'parley_llm_calls_total', { model: 'offline-1', purpose: 'chat', outcome: 'ok' })).toBe(1);
  });

  it('every attempt failing: one record per attempt, not one more for the call', async () => {
    llm = await startFakeOpenAi();
    llm.fallback({ status: 500 });
    const p = await parley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-model', max_retries: 2 } } });
    await converse(p, 'att-2', ['hello']);
    await expect.poll(async () => (await page(p, '/api/v1/telemetry/turn-calls?customerId=att-2')).items.length, { timeout: 15_000 }).toBe(3);
    const { items } = await page(p, '/api/v1/telemetry/turn-calls?customerId=att-2');
    expect(items.every((c) => c.ok === false && c.provider === 'openai')).toBe(true);
  });
});

describe('a telemetry write failure', () => {
  it('is logged and never fails the turn', async () => {
    const p = await parley();
    // The engine's telemetry writes fail: LMDB's batch write (every telemetry flush goes through it) throws; on
    // PostgreSQL a constraint no row meets refuses every insert, and names itself in the error.
    if (p.services.store.engine === 'lmdb') {
      lmdbKv(p.services.store).writeBatch = async () => {
        throw new Error('disk full (test)');
      };
    } else {
      await queryDatabase(p.services.config.storage.url!, 'ALTER TABLE telemetry_events ADD CONSTRAINT "disk full (test)" CHECK (false) NOT VALID');
    }
    const replies = await converse(p, 'wf-1', ['status of order 1001', 'thanks']);
    expect(replies).toHaveLength(2);
    await p.services.telemetry.flush();
    expect(p.logs.some((l) => l.includes('telemetry write failed') && l.includes('disk full (test)'))).toBe(true);
    // The conversation itself was stored.
    expect(await p.services.store.conversations.get('conv_web_wf-1')).toMatchObject({ state: 'idle' });
  });
});

describe('retention', () => {
  it('prunes records older than retention_days; keeps the ones inside', async () => {
    const p = await parley({ config: { telemetry: { retention_days: 30 } } });
    await converse(p, 'ret-1', ['hello']);
    const now = p.services.clock.now();
    p.services.telemetry.event({ type: 'keep.me', conversationId: 'conv_web_ret-1', at: now + 20 * 86_400_000, data: {} });
    await p.services.telemetry.flush();
    const before = await page(p, '/api/v1/telemetry/events?conversationId=conv_web_ret-1&limit=1000');
    expect(before.items.length).toBeGreaterThan(3);
    expect((await page(p, '/api/v1/telemetry/turn-calls?conversationId=conv_web_ret-1')).items).toHaveLength(1);

    // 31 days later the hourly prune timer fires (the clock jump fires due timers).
    await fetch(`${p.url()}/__test__/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ offsetMs: 31 * 86_400_000 }),
    });
    // Events are pruned first, then turn-calls: wait for both.
    await expect.poll(async () => (await page(p, '/api/v1/telemetry/turn-calls')).items.length, { timeout: 15_000 }).toBe(0);
    expect((await page(p, '/api/v1/telemetry/events?type=message.in')).items).toHaveLength(0);
    const after = await page(p, '/api/v1/telemetry/events?conversationId=conv_web_ret-1&limit=1000');
    // The jump also decides the conversation's outcome (assumed resolved, docs/outcomes.md): that event is new.
    expect(after.items.map((e) => e.type).filter((t) => t !== 'conversation.outcome')).toEqual(['keep.me']);
  });
});

describe('conversation timeline and the recent list', () => {
  it('pages through one conversation’s records, in both orders; the recent list is the newest conversation first', async () => {
    const p = await parley();
    await converse(p, 'tl-1', ['one', 'two']);
    await converse(p, 'tl-2', ['three']);
    const all = (await page(p, '/api/v1/telemetry/events?conversationId=conv_web_tl-1&limit=1000')).items;
    expect(all.length).toBeGreaterThan(4);
    expect(all.every((e) => e.conversationId === 'conv_web_tl-1')).toBe(true);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const pg: { items: { id: string }[]; nextCursor: string | null } = await page(
        p,
        `/api/v1/telemetry/events?conversationId=conv_web_tl-1&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      ids.push(...pg.items.map((e) => e.id));
      cursor = pg.nextCursor;
    } while (cursor);
    expect(ids).toEqual(all.map((e) => e.id));
    const desc = await page(p, '/api/v1/telemetry/events?conversationId=conv_web_tl-1&limit=2&order=desc');
    expect(desc.items.map((e) => e.id)).toEqual(
      all
        .slice(-2)
        .reverse()
        .map((e) => e.id),
    );
    const recent = await (await fetch(`${p.url()}/api/v1/telemetry/conversations?limit=1`, { headers: auth })).json();
    expect(recent.items.map((c: { conversationId: string }) => c.conversationId)).toEqual(['conv_web_tl-2']);
    expect(recent.items[0].snapshot).toBeUndefined();
  });
});

describe('switching persistence at run time (test mode, for the cost benchmark)', () => {
  it('POST /__test__/telemetry stops and resumes persisting; listeners see every record; a bad body is a 400', async () => {
    const p = await parley();
    const post = (body: unknown) =>
      fetch(`${p.url()}/__test__/telemetry`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const seen: string[] = [];
    p.services.telemetry.subscribe({ event: (e) => void seen.push(e.type) });
    expect(await (await post({ persist: false })).json()).toEqual({ persist: false });
    p.services.telemetry.event({ type: 'switch.off', data: {} });
    expect(await (await post({ persist: true })).json()).toEqual({ persist: true });
    p.services.telemetry.event({ type: 'switch.on', data: {} });
    expect((await page(p, '/api/v1/telemetry/events?type=switch.*')).items.map((e) => e.type)).toEqual(['switch.on']);
    expect(seen).toEqual(['switch.off', 'switch.on']);
    const bad = await post({ persist: 'yes' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBeDefined();
  });
});
