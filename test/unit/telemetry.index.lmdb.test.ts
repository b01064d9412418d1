// Telemetry on LMDB beyond the segments themselves (telemetry.segments.lmdb.test.ts): retention rewrites the
// conversation index with the segments it drops, a conversation's timeline and the recent list read the index (never
// a scan), and records written before the index existed are indexed once when the store's upkeep starts.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import type { RangeOptions, TableName } from '../../src/store/lmdb/kv.ts';
import { compactConversationIndex } from '../../src/store/lmdb/telemetry/compaction.ts';
import { INDEX_MARKER } from '../../src/store/lmdb/telemetry/index-backfill.ts';
import { conversationRefs } from '../../src/store/lmdb/telemetry/segment-reader.ts';
import { recentConversations } from '../../src/telemetry/recent-conversations.ts';
import { createTelemetryRecorder } from '../../src/telemetry/recorder.ts';
import { createRetentionPruner } from '../../src/telemetry/retention.ts';
import type { Telemetry } from '../../src/telemetry/types.ts';
import { openTestStore, type TestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
const logger = createLogger('silent');

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(path?: string) {
  const store = await openTestStore(path);
  const clock = createManualClock(T0);
  const telemetry = createTelemetryRecorder({ store, clock, logger });
  cleanup.push(
    () => store.close(),
    () => telemetry.close(),
  );
  return { store, clock, telemetry };
}

/** What a turn records: its messages and one LLM call. */
function turn(telemetry: Telemetry, conversationId: string, at: number, n: number) {
  for (const type of ['message.in', 'message.out', 'turn.ended'])
    telemetry.event({ type, at, conversationId, customerId: 'cus', data: { turnId: `${conversationId}:${n}` } });
  telemetry.turnCall({
    turnId: `${conversationId}:${n}`,
    conversationId,
    customerId: 'cus',
    sequence: 1,
    at,
    provider: 'offline',
    model: 'offline-1',
    purpose: 'chat',
    durationMs: 1,
    promptTokens: 1,
    completionTokens: 1,
    toolCalls: [],
    ok: true,
  });
}

const keysOf = (store: TestStore, table: TableName) => [...store.kv.range(table)].map((r) => r.key);

describe('retention on LMDB', () => {
  it('prunes segments older than retention_days with their index entries; what is left points at the segment left', async () => {
    const { store, clock, telemetry } = await setup();
    turn(telemetry, 'conv_web_ret-1', T0, 1);
    await telemetry.flush();
    turn(telemetry, 'conv_web_ret-2', T0 + 1000, 1);
    telemetry.event({ type: 'keep.me', conversationId: 'conv_web_ret-1', at: T0 + 20 * DAY, data: {} });
    await telemetry.flush();
    // Fold the flushes' references into the conversation index, so the prune has index entries to rewrite.
    for (const t of ['telemetry', 'turnCalls'] as const) expect(await compactConversationIndex(store.kv, t)).toBe(2);

    clock.advance(31 * DAY);
    const pruner = createRetentionPruner({ store, clock, retentionDays: 30, logger });
    expect(await pruner.prune()).toBe(3 + 1 + 3 + 1);
    const events = await store.telemetry.events({ conversationId: 'conv_web_ret-1', limit: 100, order: 'asc' });
    expect(events.items.map((e) => e.type)).toEqual(['keep.me']);
    expect((await store.telemetry.turnCalls({ limit: 100, order: 'asc' })).items).toEqual([]);
    // The conversation's references point at the one segment left (keep.me's); the other conversation has none.
    const refs = [...conversationRefs(store.kv, 'telemetry', 'conv_web_ret-1').keys()];
    expect(refs).toHaveLength(1);
    expect(store.kv.get('telemetry', refs[0])).toBeDefined();
    expect(conversationRefs(store.kv, 'telemetry', 'conv_web_ret-2').size).toBe(0);
    const indexKeys = keysOf(store, 'telemetry').filter((k) => Array.isArray(k));
    expect(indexKeys.map((k) => (k as string[])[0])).toEqual(['~conv_web_ret-1']);
    expect(keysOf(store, 'turnCalls').filter((k) => k !== INDEX_MARKER)).toEqual([]);
    expect(await pruner.prune()).toBe(0);
  });
});

describe('reads through the conversation index', () => {
  it('a conversation’s timeline reads its own records through the index; the recent list walks the newest events, not every conversation', async () => {
    const { store, telemetry } = await setup();
    for (let n = 1; n <= 3; n++) {
      turn(telemetry, 'conv_web_tl-1', T0 + n * 1000, n);
      turn(telemetry, 'conv_web_tl-other', T0 + n * 1000 + 1, n);
      await telemetry.flush();
    }
    turn(telemetry, 'conv_web_tl-2', T0 + 10_000, 1);
    await telemetry.flush();
    await compactConversationIndex(store.kv, 'telemetry'); // one conversation compacted, one only in pending references
    turn(telemetry, 'conv_web_tl-1', T0 + 20_000, 4);
    await telemetry.flush();
    for (const c of ['conv_web_tl-1', 'conv_web_tl-2', 'conv_web_tl-other']) {
      await store.conversations.put({
        conversationId: c,
        customerId: 'cus',
        channel: 'web',
        snapshot: {},
        state: 'idle',
        busy: false,
        updatedAt: T0,
        lastMessageAt: T0,
      });
    }

    // The index, not a scan: every range of the table but the index (`~…`) and the pending references (`}…`) throws.
    const range = store.kv.range;
    store.kv.range = (<V>(table: TableName, o: RangeOptions = {}) => {
      if (!/^[~}]/.test(String(o.start ?? ''))) throw new Error(`full-table scan of ${table}`);
      return range<V>(table, o);
    }) as typeof range;
    try {
      const all = (await store.telemetry.events({ conversationId: 'conv_web_tl-1', limit: 1000, order: 'asc' })).items;
      expect(all.map((e) => e.data.turnId)).toEqual(['1', '2', '3', '4'].flatMap((n) => Array(3).fill(`conv_web_tl-1:${n}`)));
      const desc = (await store.telemetry.events({ conversationId: 'conv_web_tl-1', limit: 2, order: 'desc' })).items;
      expect(desc.map((e) => e.id)).toEqual(
        all
          .slice(-2)
          .reverse()
          .map((e) => e.id),
      );
      expect((await store.telemetry.turnCalls({ conversationId: 'conv_web_tl-2', limit: 10, order: 'asc' })).items).toHaveLength(1);
    } finally {
      store.kv.range = range;
    }

    // The recent list: not one read of every conversation record.
    const scan = store.kv.direct.range;
    store.kv.direct.range = (() => {
      throw new Error('read every conversation');
    }) as typeof scan;
    try {
      const recent = await recentConversations(store, 1);
      expect(recent.map((c) => c.conversationId)).toEqual(['conv_web_tl-1']);
      expect((recent[0] as { snapshot?: unknown }).snapshot).toBeUndefined();
    } finally {
      store.kv.direct.range = scan;
    }
  });
});

describe('records older than the conversation index', () => {
  it('are indexed once when the store’s upkeep starts (as Parley starts its retention), so their timeline is found', async () => {
    const path = tempDir();
    const first = await openTestStore(path);
    // A store written before the index: one record per key, no index keys, no marker.
    const at = T0 - 60_000;
    await first.kv.direct.put('telemetry', `${at}-00000001`, { id: `${at}-00000001`, at, type: 'message.in', conversationId: 'conv_web_legacy', data: {} });
    await first.kv.direct.put('turnCalls', `${at}-00000002`, {
      id: `${at}-00000002`,
      turnId: 'conv_web_legacy:1',
      conversationId: 'conv_web_legacy',
      customerId: 'legacy',
      sequence: 1,
      at,
      provider: 'offline',
      model: 'offline-1',
      purpose: 'chat',
      durationMs: 1,
      promptTokens: 1,
      completionTokens: 1,
      toolCalls: [],
      ok: true,
    });
    await first.close();

    const { store, clock } = await setup(path);
    const byConversation = async () => ({
      events: (await store.telemetry.events({ conversationId: 'conv_web_legacy', limit: 10, order: 'asc' })).items.map((e) => e.type),
      calls: (await store.telemetry.turnCalls({ conversationId: 'conv_web_legacy', limit: 10, order: 'asc' })).items.length,
    });
    expect(await byConversation()).toEqual({ events: [], calls: 0 });
    const pruner = createRetentionPruner({ store, clock, retentionDays: 30, logger });
    pruner.start();
    cleanup.push(async () => pruner.stop());
    // The backfill runs in the background: events first, then turn-calls.
    await expect.poll(byConversation, { timeout: 15_000 }).toEqual({ events: ['message.in'], calls: 1 });
    await expect.poll(() => store.kv.get('turnCalls', INDEX_MARKER), { timeout: 15_000 }).toBe(true);
    expect(store.kv.get('telemetry', INDEX_MARKER)).toBe(true);
  });
});
