// Issue 7: telemetry segments — the tuple codec, how a flush is cut into segments,
// reading them back in id order (times out of order, several flushes, legacy
// one-record values), the conversation index and its compaction. A real LMDB.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import type { TelemetryFilter } from '../../src/store/repos.ts';
import { eventCodec, turnCallCodec } from '../../src/store/lmdb/telemetry/codec.ts';
import { compactConversationIndex } from '../../src/store/lmdb/telemetry/compaction.ts';
import { conversationIndexRange, msOf, PENDING_END, PENDING_START, SEGMENT_SPAN_MS } from '../../src/store/lmdb/telemetry/keys.ts';
import { createSegmentBuilder, isSegment } from '../../src/store/lmdb/telemetry/segment.ts';
import { readConversation, readRange } from '../../src/store/lmdb/telemetry/segment-reader.ts';
import { createTelemetryRecorder } from '../../src/telemetry/recorder.ts';
import type { TelemetryEvent } from '../../src/telemetry/types.ts';
import { openTestStore, type TestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

const T0 = 1_763_769_600_000;
const stores: TestStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
/** Log lines, of the store and the recorder alike (the engine encodes the records, and logs what it cannot). */
const lines: string[] = [];
const logger = createLogger('info', new Writable({ write: (chunk, _enc, done) => void (lines.push(String(chunk)), done()) }));
afterEach(() => void lines.splice(0));
async function store() {
  const s = await openTestStore(undefined, { logger });
  stores.push(s);
  return s;
}
function recorder(s: TestStore, start = T0) {
  const clock = createManualClock(start);
  return { telemetry: createTelemetryRecorder({ store: s, clock, logger }), clock };
}
/** A small deterministic PRNG, so a failure can be replayed. */
function random(seed: number) {
  let x = seed;
  return () => (x = (x * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}
const ids = (records: { id: string }[]) => records.map((r) => r.id);
const event = (id: string, conversationId?: string): TelemetryEvent => ({
  id,
  at: msOf(id),
  type: 't',
  conversationId,
  customerId: undefined,
  customerExternalId: undefined,
  channel: undefined,
  data: {},
});

describe('codec', () => {
  it('round-trips both record kinds, absent fields included, and decodes one record at its offset', () => {
    const events = eventCodec();
    const e: TelemetryEvent = {
      id: `${T0}-00000001`,
      at: T0,
      type: 'tool.result',
      conversationId: 'c1',
      customerId: undefined,
      customerExternalId: 'x',
      channel: 'web',
      data: { name: 'f', nested: { list: [1, 'two', null] } },
    };
    const f: TelemetryEvent = {
      id: `${T0}-00000002`,
      at: T0,
      type: 'sdk.connected',
      conversationId: undefined,
      customerId: undefined,
      customerExternalId: undefined,
      channel: undefined,
      data: {},
    };
    const a = Buffer.from(events.encode(e));
    const b = Buffer.from(events.encode(f));
    const body = Buffer.concat([a, b]);
    expect(events.decodeAll(body)).toEqual([e, f]);
    expect(events.decodeAt(body, a.length)).toEqual(f);
    expect(() => events.decodeAt(body, body.length)).toThrow();

    const calls = turnCallCodec();
    const c = {
      id: `${T0}-00000003`,
      turnId: 't1',
      conversationId: 'c1',
      customerId: 'u1',
      sequence: 2,
      at: T0,
      provider: 'openai',
      model: 'm',
      purpose: 'chat',
      durationMs: 12.5,
      promptTokens: 10,
      completionTokens: 3,
      toolCalls: ['a', 'b'],
      ok: false,
      error: 'boom',
    };
    expect(calls.decodeAll(calls.encode(c))).toEqual([c]);
  });
});

describe('cutting a flush into segments', () => {
  it('in-order records make one segment keyed by the first id, with each conversation’s offsets', () => {
    const codec = eventCodec();
    const builder = createSegmentBuilder(16); // tiny, so the buffer has to grow
    const records = [event(`${T0}-00000001`, 'a'), event(`${T0 + 5}-00000002`, 'b'), event(`${T0 + 9}-00000003`, 'a'), event(`${T0 + 9}-00000004`)];
    for (const r of records) builder.add(r.id, r.conversationId, codec.encode(r));
    const [segment, ...rest] = builder.cut();
    expect(rest).toEqual([]);
    expect(builder.count).toBe(0);
    expect(segment.key).toBe(records[0].id);
    expect(segment.value).toMatchObject({ v: 1, maxId: records[3].id, count: 4, conversations: ['a', 'b'] });
    expect(codec.decodeAll(segment.value.body)).toEqual(records);
    expect(segment.refs.get('a')!.map((o) => codec.decodeAt(segment.value.body, o).id)).toEqual([records[0].id, records[2].id]);
    expect(builder.cut()).toEqual([]);
  });

  it('sorts records given out of order, and cuts wherever a segment would span 60 s or more', () => {
    const codec = eventCodec();
    const builder = createSegmentBuilder();
    const at = [T0 + 30_000, T0, T0 + 59_999, T0 + 60_000, T0 - 86_400_000, T0 + 1];
    const records = at.map((ms, i) => event(`${ms}-0000000${i}`, `c${i % 2}`));
    for (const r of records) builder.add(r.id, r.conversationId, codec.encode(r));
    const segments = builder.cut();
    const sorted = ids(records).sort();
    expect(segments.map((s) => s.key)).toEqual([sorted[0], sorted[1], sorted[5]]);
    expect(segments.flatMap((s) => ids(codec.decodeAll(s.value.body)))).toEqual(sorted);
    for (const s of segments) {
      const inside = codec.decodeAll(s.value.body);
      expect(msOf(inside[inside.length - 1].id) - msOf(s.key)).toBeLessThan(SEGMENT_SPAN_MS);
      expect(s.value.maxId).toBe(inside[inside.length - 1].id);
      for (const [c, offsets] of s.refs) for (const o of offsets) expect(codec.decodeAt(s.value.body, o).conversationId).toBe(c);
    }
  });
});

describe('reading back in id order', () => {
  it('matches a plain sort for random windows, both directions, across overlapping flushes', async () => {
    const s = await store();
    const { telemetry } = recorder(s);
    const rnd = random(7);
    const all: TelemetryEvent[] = [];
    telemetry.subscribe({ event: (e) => void all.push(e) });
    for (let flush = 0; flush < 12; flush++) {
      for (let i = 0; i < 40; i++) {
        // Mostly "now" (advancing), sometimes minutes in the past: segments overlap and split.
        const base = T0 + flush * 20_000 + i * 100;
        const at = rnd() < 0.15 ? base - Math.floor(rnd() * 300_000) : base;
        telemetry.event({ type: 'r', at, conversationId: `c${Math.floor(rnd() * 5)}`, data: { flush, i } });
      }
      await telemetry.flush();
    }
    const keys = [...s.kv.range('telemetry', { end: ':' })];
    expect(keys.length).toBeGreaterThan(12); // some flushes were cut in more than one segment
    expect(keys.every((k) => isSegment(k.value))).toBe(true);
    const sorted = ids(all).sort();
    expect(ids([...readRange(s.kv, 'telemetry', eventCodec())])).toEqual(sorted);
    expect(ids([...readRange(s.kv, 'telemetry', eventCodec(), { reverse: true })])).toEqual([...sorted].reverse());
    for (let k = 0; k < 60; k++) {
      const a = sorted[Math.floor(rnd() * sorted.length)];
      const b = sorted[Math.floor(rnd() * sorted.length)];
      const [lower, upper] = a < b ? [a, b] : [b, a];
      const want = sorted.filter((id) => id >= lower && id < upper);
      expect(ids([...readRange(s.kv, 'telemetry', eventCodec(), { lower, upper })])).toEqual(want);
      expect(ids([...readRange(s.kv, 'telemetry', eventCodec(), { lower, upper, reverse: true })])).toEqual([...want].reverse());
      const c = `c${k % 5}`;
      const mine = all
        .filter((e) => e.conversationId === c)
        .map((e) => e.id)
        .sort()
        .filter((id) => id >= lower && id < upper);
      expect(ids([...readConversation(s.kv, 'telemetry', eventCodec(), c, { lower, upper })])).toEqual(mine);
      expect(ids([...readConversation(s.kv, 'telemetry', eventCodec(), c, { lower, upper, reverse: true })])).toEqual([...mine].reverse());
    }
    // Page by page through the query API, both orders: every record once, in order.
    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await s.telemetry.events({ limit: 7, order, cursor, conversationId: 'c3' });
        seen.push(...ids(page.items));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const mine = all
        .filter((e) => e.conversationId === 'c3')
        .map((e) => e.id)
        .sort();
      expect(seen).toEqual(order === 'asc' ? mine : mine.reverse());
    }
    await telemetry.close();
  });

  it('reads values from before segments (one record per key, index entries listing ids) with the new ones', async () => {
    const s = await store();
    const legacy = [event(`${T0 + 10}-00000001`, 'c1'), event(`${T0 + 30}-00000003`, 'c1'), event(`${T0 + 40}-00000004`, 'c2')];
    for (const e of legacy) await s.kv.direct.put('telemetry', e.id, e);
    // The key exactly as builds before segments wrote it: one string with a NUL between the id and the record id.
    await s.kv.direct.put('telemetry', `~c1\u0000${legacy[0].id}`, [legacy[0].id, legacy[1].id]);
    const { telemetry } = recorder(s);
    telemetry.event({ type: 'new', at: T0 + 20, conversationId: 'c1', data: {} });
    telemetry.event({ type: 'new', at: T0 + 50, conversationId: 'c1', data: {} });
    await telemetry.flush();
    expect([...readRange(s.kv, 'telemetry', eventCodec())].map((e) => e.at)).toEqual([T0 + 10, T0 + 20, T0 + 30, T0 + 40, T0 + 50]);
    expect([...readConversation(s.kv, 'telemetry', eventCodec(), 'c1')].map((e) => e.at)).toEqual([T0 + 10, T0 + 20, T0 + 30, T0 + 50]);
    expect([...readConversation(s.kv, 'telemetry', eventCodec(), 'c1', { reverse: true })].map((e) => e.at)).toEqual([T0 + 50, T0 + 30, T0 + 20, T0 + 10]);
    await telemetry.close();
  });
});

describe('the conversation index', () => {
  it('compaction folds the flushes’ references into one entry per conversation; reads are the same before and after', async () => {
    const s = await store();
    const { telemetry } = recorder(s);
    for (let flush = 0; flush < 3; flush++) {
      for (const c of ['a', 'b']) telemetry.event({ type: 'x', at: T0 + flush * 1000, conversationId: c, data: { flush } });
      telemetry.turnCall({
        turnId: 't',
        conversationId: 'a',
        customerId: 'u',
        sequence: flush,
        provider: 'p',
        model: 'm',
        purpose: 'chat',
        durationMs: 1,
        promptTokens: 1,
        completionTokens: 1,
        toolCalls: [],
        ok: true,
      });
      await telemetry.flush();
    }
    const pending = () => [...s.kv.range('telemetry', { start: PENDING_START, end: PENDING_END })].length;
    expect(pending()).toBe(3);
    const before = ids([...readConversation(s.kv, 'telemetry', eventCodec(), 'a')]);
    expect(before).toHaveLength(3);
    expect(await compactConversationIndex(s.kv, 'telemetry')).toBe(3);
    expect(await compactConversationIndex(s.kv, 'turnCalls')).toBe(3);
    expect(pending()).toBe(0);
    const entries = [...s.kv.range<unknown[]>('telemetry', { start: '~', end: '~\uffff' })];
    expect(entries.map((e) => (e.key as string[])[0])).toEqual(['~a', '~b']);
    expect(entries[0].value).toHaveLength(3); // one reference per segment
    expect(ids([...readConversation(s.kv, 'telemetry', eventCodec(), 'a')])).toEqual(before);
    expect([...readConversation(s.kv, 'turnCalls', turnCallCodec(), 'a')].map((c) => c.sequence)).toEqual([0, 1, 2]);
    expect(await compactConversationIndex(s.kv, 'telemetry')).toBe(0);
    await telemetry.close();
  });

  // Issue 15 part 8: a range starting at the string `~<id>\0` found nothing once compaction ran, for ids of 40
  // characters or more (lmdb's key encoding escapes `\0` only in strings under 64 characters). Real ids are 49.
  it('finds a conversation of any id length after compaction, before and after a restart; retention prunes its entries', async () => {
    const path = tempDir();
    let s = await openTestStore(path);
    const lengths = [1, 10, 39, 40, 41, 49, 62, 63, 64, 200];
    const conversations = lengths.map((n) => `conv_web_cus_${'0123456789abcdef'.repeat(13)}`.slice(0, n));
    const { telemetry, clock } = recorder(s);
    for (const [i, c] of conversations.entries()) {
      telemetry.event({ type: 'message.in', at: T0 + i, conversationId: c, data: {} });
      telemetry.event({ type: 'message.out', at: T0 + 100 + i, conversationId: c, data: {} });
    }
    await telemetry.flush();
    clock.advance(1000);
    for (const [i, c] of conversations.entries()) telemetry.event({ type: 'turn.ended', at: T0 + 1000 + i, conversationId: c, data: {} });
    await telemetry.flush();
    expect(await compactConversationIndex(s.kv, 'telemetry')).toBe(2);
    const types = async (c: string, q: Partial<TelemetryFilter> = {}) =>
      (await s.telemetry.events(Object.assign({ conversationId: c, limit: 100, order: 'asc' as const }, q))).items.map((e) => e.type);
    for (const c of conversations) {
      expect(await types(c), `id of ${c.length} characters`).toEqual(['message.in', 'message.out', 'turn.ended']);
      expect(await types(c, { order: 'desc' }), `id of ${c.length} characters, desc`).toEqual(['turn.ended', 'message.out', 'message.in']);
      expect(await types(c, { until: T0 + 500 }), `id of ${c.length} characters, until`).toEqual(['message.in', 'message.out']);
    }
    await telemetry.close();
    await s.close();
    stores.splice(stores.indexOf(s), 1);
    s = await openTestStore(path);
    stores.push(s);
    for (const c of conversations) expect(await types(c), `id of ${c.length} characters, reopened`).toHaveLength(3);

    // Retention drops the first segment and rewrites every conversation's entry to the one segment left.
    const { createRetentionPruner } = await import('../../src/telemetry/retention.ts');
    const pruneClock = createManualClock(T0 + 500 + 86_400_000);
    const pruner = createRetentionPruner({ store: s, clock: pruneClock, retentionDays: 1, logger: createLogger('silent') });
    expect(await pruner.prune()).toBe(2 * conversations.length);
    for (const c of conversations) {
      expect(await types(c), `id of ${c.length} characters, pruned`).toEqual(['turn.ended']);
      const entries = [...s.kv.range<unknown[]>('telemetry', conversationIndexRange(c))];
      expect(entries, `id of ${c.length} characters: one entry, one segment`).toHaveLength(1);
      expect(entries[0].value).toHaveLength(1);
    }
  });

  it('a record that cannot be encoded is logged and dropped; the rest of the flush is written', async () => {
    const s = await store();
    const { telemetry } = recorder(s);
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    telemetry.event({ type: 'before', conversationId: 'a', data: {} });
    telemetry.event({ type: 'circular', conversationId: 'a', data: loop });
    telemetry.event({ type: 'after', conversationId: 'a', data: {} });
    await telemetry.flush();
    expect([...readConversation(s.kv, 'telemetry', eventCodec(), 'a')].map((e) => e.type)).toEqual(['before', 'after']);
    expect(lines.some((l) => l.includes('telemetry event not encodable, dropped') && l.includes('circular'))).toBe(true);
    await telemetry.close();
  });
});
