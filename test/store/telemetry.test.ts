// Contract: TelemetryStore (src/store/repos.ts), on every engine of engines.ts: the batching writer, every filter of
// the telemetry API, cursor pages in both orders, the dashboard's window and recent conversations, retention.
import { describe, expect, it } from 'vitest';
import type { Store, TelemetryFilter } from '../../src/store/repos.ts';
import { timeOrderedId } from '../../src/store/telemetry-records.ts';
import type { TelemetryEvent, TurnCallRecord } from '../../src/telemetry/types.ts';
import { freshStore } from './contract.ts';
import { engines } from './engines.ts';

const T0 = 1_795_497_313_000;
let seq = 0;

function event(at: number, type: string, extra: Partial<TelemetryEvent> = {}): TelemetryEvent {
  return Object.assign({ id: timeOrderedId(at, ++seq), at, type, data: {} }, extra);
}

function turnCall(at: number, extra: Partial<TurnCallRecord> = {}): TurnCallRecord {
  return Object.assign(
    {
      id: timeOrderedId(at, ++seq),
      turnId: 'conv_a:m1',
      conversationId: 'conv_a',
      customerId: 'cus_a',
      sequence: 1,
      at,
      provider: 'openai',
      model: 'gpt-x',
      purpose: 'chat',
      durationMs: 12.5,
      promptTokens: 100,
      completionTokens: 20,
      toolCalls: ['lookup', 'refund'],
      ok: true,
    },
    extra,
  );
}

const page = (f: Partial<TelemetryFilter>): TelemetryFilter => Object.assign({ limit: 100, order: 'asc' as const }, f);
const ids = (items: { id: string }[]) => items.map((i) => i.id);

export function describeTelemetryContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: telemetry`, () => {
    const store = freshStore(open);

    const write = async (events: TelemetryEvent[], calls: TurnCallRecord[] = []) => {
      const w = store().telemetry.writer();
      for (const e of events) w.addEvent(e);
      for (const c of calls) w.addTurnCall(c);
      expect(w.pending()).toBe(events.length + calls.length);
      expect(await w.flush()).toBe(events.length + calls.length);
      expect(w.pending()).toBe(0);
    };

    it('the writer holds records until flush, which writes them all; records come back whole', async () => {
      const w = store().telemetry.writer();
      const full = event(T0, 'message.in', {
        conversationId: 'conv_a',
        customerId: 'cus_a',
        customerExternalId: 'ext-a',
        channel: 'web',
        data: { messageId: 'm1', turnId: 'conv_a:m1', length: 5, nested: { list: [1, 'two', null] } },
      });
      const bare = event(T0 + 1, 'error');
      const call = turnCall(T0 + 2, { ok: false, error: 'rate limited', toolCalls: [] });
      w.addEvent(full);
      w.addEvent(bare);
      w.addTurnCall(call);
      expect(w.pending()).toBe(3);
      expect((await store().telemetry.events(page({}))).items).toEqual([]);
      expect(await w.flush()).toBe(3);
      expect(await w.flush()).toBe(0);
      expect((await store().telemetry.events(page({}))).items).toEqual([full, bare]);
      expect((await store().telemetry.turnCalls(page({}))).items).toEqual([call]);
    });

    it('text with U+0000 is written, not refused with its batch (PostgreSQL keeps U+FFFD in its place); a literal "\\u0000" stays', async () => {
      const nul = event(T0, 'message.in', { conversationId: 'conv_\u0000a', data: { text: 'a\u0000b', literal: 'x\\u0000y' } });
      const other = event(T0 + 1, 'message.out', { conversationId: 'conv_b' });
      const call = turnCall(T0 + 2, { ok: false, error: 'model said \u0000' });
      await write([nul, other], [call]);
      const kept = (s: string) => [s, s.replaceAll('\u0000', '\uFFFD')];
      const [first, second] = (await store().telemetry.events(page({}))).items;
      expect(kept('conv_\u0000a')).toContain(first.conversationId);
      expect(kept('a\u0000b')).toContain((first.data as { text: string }).text);
      expect((first.data as { literal: string }).literal).toBe('x\\u0000y');
      expect(second).toEqual(other);
      const [storedCall] = (await store().telemetry.turnCalls(page({}))).items;
      expect(kept('model said \u0000')).toContain(storedCall.error);
    });

    it("a call's cached prompt tokens and cost come back as written (by page and in the dashboard's window); a call without them has neither", async () => {
      const priced = turnCall(T0, { promptTokens: 1200, cachedPromptTokens: 200, completionTokens: 300, cost: 0.00575 });
      const unpriced = turnCall(T0 + 1);
      await write([], [priced, unpriced]);
      const items = (await store().telemetry.turnCalls(page({}))).items;
      expect(items).toEqual([priced, unpriced]);
      expect(items[1]).not.toHaveProperty('cost', expect.anything());
      expect(items[1]).not.toHaveProperty('cachedPromptTokens', expect.anything());
      const windowed = [];
      for await (const c of store().telemetry.window('turnCalls', { since: T0, until: T0 + 1 })) windowed.push(c);
      expect(windowed.map((c) => [c.cachedPromptTokens, c.cost])).toEqual([
        [200, 0.00575],
        [undefined, undefined],
      ]);
    });

    it('flushes issued together each resolve once their records are written', async () => {
      const w = store().telemetry.writer();
      w.addEvent(event(T0, 'a'));
      const first = w.flush();
      expect(w.pending()).toBe(1); // taken by the flush, not written yet
      w.addEvent(event(T0 + 1, 'b'));
      w.addEvent(event(T0 + 2, 'c'));
      const second = w.flush();
      expect(w.pending()).toBe(3);
      expect(await Promise.all([first, second])).toEqual([1, 2]);
      expect(w.pending()).toBe(0);
      expect((await store().telemetry.events(page({}))).items).toHaveLength(3);
    });

    it('events: since and until (both inclusive) on `at`; exact type or a `prefix.*`; in id order both ways', async () => {
      const es = [
        event(T0, 'tool.invoked'),
        event(T0 + 10, 'tool.failed'),
        event(T0 + 20, 'toolbox'),
        event(T0 + 30, 'message.out'),
        event(T0 + 40, 'tool.invoked'),
      ];
      await write(es);
      expect(ids((await store().telemetry.events(page({ since: T0 + 10, until: T0 + 39 }))).items)).toEqual(ids(es.slice(1, 4)));
      expect(ids((await store().telemetry.events(page({ since: T0 + 10, until: T0 + 40 }))).items)).toEqual(ids(es.slice(1, 5)));
      expect(ids((await store().telemetry.events(page({ type: 'tool.*' }))).items)).toEqual(ids([es[0], es[1], es[4]]));
      expect(ids((await store().telemetry.events(page({ type: 'tool.invoked' }))).items)).toEqual(ids([es[0], es[4]]));
      expect(ids((await store().telemetry.events(page({ type: 'tool' }))).items)).toEqual([]);
      expect(ids((await store().telemetry.events(page({ order: 'desc' }))).items)).toEqual(ids(es).reverse());
      expect(ids((await store().telemetry.events(page({ order: 'desc', type: 'tool.*', until: T0 + 39 }))).items)).toEqual(ids([es[1], es[0]]));
    });

    it('events: by conversation, customer, turn, and external id or the customer’s own ids', async () => {
      const es = [
        event(T0, 'message.in', { conversationId: 'conv_a', customerId: 'cus_a', customerExternalId: 'ext-a', data: { turnId: 't1' } }),
        event(T0 + 1, 'message.out', { conversationId: 'conv_a', customerId: 'cus_a', data: { turnId: 't1' } }),
        event(T0 + 2, 'whatsapp.status', { customerId: 'cus_a2' }), // a status knows only the customer id
        event(T0 + 3, 'message.in', { conversationId: 'conv_b', customerId: 'cus_b', customerExternalId: 'ext-b', data: { turnId: 't2' } }),
      ];
      await write(es);
      const q = async (f: Partial<TelemetryFilter>) => ids((await store().telemetry.events(page(f))).items);
      expect(await q({ conversationId: 'conv_a' })).toEqual(ids(es.slice(0, 2)));
      expect(await q({ customerId: 'cus_a' })).toEqual(ids(es.slice(0, 2)));
      expect(await q({ turnId: 't2' })).toEqual([es[3].id]);
      expect(await q({ customerExternalId: 'ext-a' })).toEqual([es[0].id]);
      expect(await q({ customerExternalId: 'ext-a', customerIds: ['cus_a', 'cus_a2'] })).toEqual(ids(es.slice(0, 3)));
      expect(await q({ customerExternalId: 'ext-nobody', customerIds: [] })).toEqual([]);
      // The API passes the resolution of an external id even when none was asked for: it filters nothing then.
      expect(await q({ customerIds: [] })).toEqual(ids(es));
      expect(await q({ conversationId: 'conv_a', turnId: 't1', type: 'message.out' })).toEqual([es[1].id]);
    });

    it('pages: the cursor is the last id returned; every record exactly once, in both orders', async () => {
      const es = Array.from({ length: 23 }, (_, i) => event(T0 + Math.floor(i / 3), i % 2 ? 'a.x' : 'b.y', { conversationId: 'conv_p' }));
      await write(es);
      for (const order of ['asc', 'desc'] as const) {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let n = 0; n < 10; n++) {
          const p = await store().telemetry.events(page({ limit: 5, order, cursor, conversationId: 'conv_p' }));
          seen.push(...ids(p.items));
          if (p.nextCursor === null) break;
          expect(p.nextCursor).toBe(p.items[p.items.length - 1].id);
          cursor = p.nextCursor;
        }
        expect(seen).toEqual(order === 'asc' ? ids(es) : ids(es).reverse());
      }
      // A page that ends exactly at the last record has no next cursor.
      const all = await store().telemetry.events(page({ limit: 23 }));
      expect(all.items).toHaveLength(23);
      expect(all.nextCursor).toBeNull();
    });

    it('turn calls: `type` filters the purpose; conversation, customer, turn, time, cursor', async () => {
      const cs = [
        turnCall(T0, { purpose: 'chat' }),
        turnCall(T0 + 1, { purpose: 'reflection', conversationId: 'conv_b', customerId: 'cus_b', turnId: 'conv_b:m9' }),
        turnCall(T0 + 2, { purpose: 'chat', sequence: 2 }),
      ];
      await write([], cs);
      const q = async (f: Partial<TelemetryFilter>) => ids((await store().telemetry.turnCalls(page(f))).items);
      expect(await q({ type: 'reflection' })).toEqual([cs[1].id]);
      expect(await q({ conversationId: 'conv_a' })).toEqual([cs[0].id, cs[2].id]);
      expect(await q({ customerId: 'cus_b' })).toEqual([cs[1].id]);
      expect(await q({ turnId: 'conv_b:m9' })).toEqual([cs[1].id]);
      expect(await q({ customerExternalId: 'ext-a', customerIds: ['cus_b'] })).toEqual([cs[1].id]);
      expect(await q({ since: T0 + 1 })).toEqual([cs[1].id, cs[2].id]);
      const first = await store().telemetry.turnCalls(page({ limit: 2, order: 'desc' }));
      expect(ids(first.items)).toEqual([cs[2].id, cs[1].id]);
      expect(await q({ order: 'desc', cursor: first.nextCursor ?? undefined })).toEqual([cs[0].id]);
    });

    it('window: every record in [since, until], oldest first, streamed; a reader may stop early', async () => {
      const es = [event(T0 - 1, 'before'), event(T0, 'a'), event(T0 + 5, 'b'), event(T0 + 9, 'c'), event(T0 + 10, 'd'), event(T0 + 11, 'after')];
      const cs = [turnCall(T0 + 1), turnCall(T0 + 10), turnCall(T0 + 11)];
      await write(es, cs);
      const all = async <T>(it: AsyncIterable<T>) => {
        const out: T[] = [];
        for await (const r of it) out.push(r);
        return out;
      };
      expect(await all(store().telemetry.window('events', { since: T0, until: T0 + 10 }))).toEqual(es.slice(1, 5));
      expect(await all(store().telemetry.window('turnCalls', { since: T0, until: T0 + 10 }))).toEqual(cs.slice(0, 2));
      const firstTwo: TelemetryEvent[] = [];
      for await (const r of store().telemetry.window('events', { since: T0, until: T0 + 10 })) {
        firstTwo.push(r);
        if (firstTwo.length === 2) break;
      }
      expect(firstTwo).toEqual(es.slice(1, 3));
    });

    it('window: a long window comes whole and in order (more records than one page of a paging engine)', async () => {
      const many = Array.from({ length: 4500 }, (_, i) => event(T0 + i, 'm'));
      await write(many);
      let n = 0;
      let last = '';
      for await (const r of store().telemetry.window('events', { since: T0, until: T0 + 4499 })) {
        expect(r.id > last).toBe(true);
        last = r.id;
        n++;
      }
      expect(n).toBe(4500);
    });

    it('recentConversationIds: distinct, newest first, limited', async () => {
      await write([
        event(T0, 'x', { conversationId: 'c1' }),
        event(T0 + 1, 'x', { conversationId: 'c2' }),
        event(T0 + 2, 'x'),
        event(T0 + 3, 'x', { conversationId: 'c1' }),
        event(T0 + 4, 'x', { conversationId: 'c3' }),
      ]);
      expect(await store().telemetry.recentConversationIds(10)).toEqual(['c3', 'c1', 'c2']);
      expect(await store().telemetry.recentConversationIds(2)).toEqual(['c3', 'c1']);
    });

    // LMDB prunes a segment (one flush's records) once its newest record is past: records written together go together.
    it('prune deletes records older than its time, events and turn calls, and counts them', async () => {
      await write([event(T0, 'old'), event(T0 + 99, 'old')], [turnCall(T0 + 50)]);
      await write([event(T0 + 100, 'kept')], [turnCall(T0 + 100)]);
      expect(await store().telemetry.prune(T0 + 100)).toBe(3);
      expect((await store().telemetry.events(page({}))).items.map((e) => e.type)).toEqual(['kept']);
      expect((await store().telemetry.turnCalls(page({}))).items).toHaveLength(1);
      expect(await store().telemetry.prune(T0 + 100)).toBe(0);
    });
  });
}

for (const e of engines) describeTelemetryContract(e.name, e.open);
