// The reflection daemon's work list on LMDB: the review index the engine keeps beside the conversation records
// (src/store/lmdb/repos/conversations.ts), its schema-2 migration, and how stale keys are dropped.
import { afterEach, describe, expect, it } from 'vitest';
import { latestVersion, migrations, schemaVersion } from '../../src/store/lmdb/migrations.ts';
import { followupKey, reviewKey } from '../../src/store/lmdb/repos/conversations.ts';
import type { ConversationRecord } from '../../src/store/model.ts';
import { closeReflectionEnvs, reflectionEnv as env } from '../support/reflection.ts';
import { openTestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

afterEach(closeReflectionEnvs);

const indexKeys = (e: { store: Awaited<ReturnType<typeof openTestStore>> }, from = 'followup') =>
  [...e.store.kv.range('proactive', { start: [from], end: ['review', '\uffff'] })].map((r) => r.key);

describe('review index', () => {
  it('cycles read only the index (a record without its key is not found), and leave no keys behind', async () => {
    const e = await env();
    const indexed = await e.conversation('indexed', { unanswered: true });
    expect(indexKeys(e)).toEqual([reviewKey((await e.record(indexed.id))!.lastMessageAt!, indexed.id)]);
    expect(await e.runCycle()).toEqual({ reviewed: 1, followups: 1 });
    expect((await e.record(indexed.id))?.reflection?.verdict).toBe('unresolved');
    expect(indexKeys(e)).toEqual([]);
    const unindexed = await e.conversation('unindexed', { unindexed: true });
    expect(await e.runCycle()).toEqual({ reviewed: 0, followups: 0 });
    expect((await e.record(unindexed.id))?.reflection).toBeUndefined();
  });

  it('the schema-2 migration indexes conversations written before the index existed', async () => {
    const path = tempDir();
    // Data as a build at schema 1 left it: records, no index keys.
    const old = await openTestStore(path, { migrations: migrations.filter((m) => m.version === 1) });
    const base = { customerId: 'c', channel: 'web' as const, snapshot: {}, state: 'idle', busy: false, updatedAt: 1 };
    await old.kv.transaction(async (tx) => {
      const put = (r: ConversationRecord) => tx.put('conversations', r.conversationId, r);
      await put(Object.assign({ conversationId: 'conv_a', lastMessageAt: 100 }, base));
      await put(Object.assign({ conversationId: 'conv_b', lastMessageAt: 200, reviewedAt: 250 }, base));
      await put(Object.assign({ conversationId: 'conv_c', lastMessageAt: 300, reviewedAt: 310, followupPending: { content: 'x', decidedAt: 310 } }, base));
    });
    await old.close();
    const store = await openTestStore(path);
    try {
      expect(schemaVersion(store.kv)).toBe(latestVersion(migrations));
      expect(indexKeys({ store })).toEqual([followupKey('conv_c'), reviewKey(100, 'conv_a')]);
      expect(await store.conversations.dueForReview(1000, 10)).toEqual([{ conversationId: 'conv_a', lastMessageAt: 100 }]);
      expect(await store.conversations.withPendingFollowup(10)).toEqual(['conv_c']);
    } finally {
      await store.close();
    }
  });

  it('a stale key (the conversation moved on, or is gone) is dropped without a review', async () => {
    const e = await env();
    const c = await e.conversation('moved');
    await e.runCycle();
    await e.store.kv.transaction(async (tx) => {
      await tx.put('proactive', reviewKey(1, c.id), 1); // a leftover key for an old lastMessageAt
      await tx.put('proactive', reviewKey(2, 'conv_gone'), 1);
      await tx.put('proactive', followupKey('conv_gone'), 1);
    });
    expect(await e.runCycle()).toEqual({ reviewed: 0, followups: 0 });
    expect(indexKeys(e)).toEqual([]);
    expect(e.ofType('daemon.verdict', c.id)).toHaveLength(1);
  });

  it('stale keys never crowd out due conversations: the work list is not filled with them', async () => {
    const e = await env({ maxPerCycle: 1 });
    await e.store.kv.transaction(async (tx) => {
      for (let i = 0; i < 10; i++) await tx.put('proactive', reviewKey(i, `conv_gone_${i}`), 1);
    });
    const c = await e.conversation('due');
    expect(await e.store.conversations.dueForReview(e.clock.now(), 1)).toEqual([
      { conversationId: c.id, lastMessageAt: (await e.record(c.id))!.lastMessageAt },
    ]);
    expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
  });
});
