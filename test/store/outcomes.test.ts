// Contract: OutcomeStore (src/store/outcomes.ts), on every engine of engines.ts: one record per conversation, the
// sweep's due list kept exact as records move on, lists by time and filter, and writes that join a transaction.
import { describe, expect, it } from 'vitest';
import type { ConversationOutcome } from '../../src/store/outcomes.ts';
import type { Store } from '../../src/store/repos.ts';
import { freshStore } from './contract.ts';
import { engines } from './engines.ts';

const outcome = (id: string, o: Partial<ConversationOutcome> = {}): ConversationOutcome =>
  Object.assign(
    {
      conversationId: id,
      customerId: `cus_${id}`,
      channel: 'web' as const,
      status: 'open' as const,
      startedAt: 1000,
      lastAt: 1000,
      reopens: 0,
      updatedAt: 1000,
    },
    o,
  );

export function describeOutcomesContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: outcomes`, () => {
    const store = freshStore(open);

    it('put and get: the record as written, replaced by the next put', async () => {
      expect(await store().outcomes.get('c1')).toBeUndefined();
      const first = outcome('c1', { externalId: 'ext-1', decideAt: 5000, waiting: 'reply', csat: { score: 4, comment: 'ok', at: 9 } });
      await store().outcomes.put(first);
      expect(await store().outcomes.get('c1')).toEqual(first);
      const second = outcome('c1', { status: 'handed_over', reason: 'policy', reasonBy: 'agent', endedAt: 7000, reopens: 2 });
      await store().outcomes.put(second);
      expect(await store().outcomes.get('c1')).toEqual(second);
    });

    it('due lists open episodes whose decideAt has come, earliest first; a record decided or moved on leaves the list', async () => {
      await store().outcomes.put(outcome('a', { decideAt: 300 }));
      await store().outcomes.put(outcome('b', { decideAt: 100 }));
      await store().outcomes.put(outcome('c', { decideAt: 200 }));
      await store().outcomes.put(outcome('d', { status: 'resolved_assumed' }));
      expect(await store().outcomes.due(250, 10)).toEqual(['b', 'c']);
      expect(await store().outcomes.due(300, 10)).toEqual(['b', 'c', 'a']);
      expect(await store().outcomes.due(300, 1)).toEqual(['b']);
      expect(await store().outcomes.nextDue()).toBe(100);
      await store().outcomes.put(outcome('b', { decideAt: 400 }));
      await store().outcomes.put(outcome('c', { status: 'abandoned' }));
      expect(await store().outcomes.due(350, 10)).toEqual(['a']);
      expect(await store().outcomes.nextDue()).toBe(300);
      await store().outcomes.put(outcome('a', { status: 'unresolved' }));
      await store().outcomes.put(outcome('b', { status: 'unresolved' }));
      expect(await store().outcomes.nextDue()).toBeUndefined();
      expect(await store().outcomes.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    });

    it('list: newest start first, within the window (edges included), by channel, status and customer, at most limit', async () => {
      await store().outcomes.put(outcome('w1', { startedAt: 100, status: 'resolved_confirmed' }));
      await store().outcomes.put(outcome('w2', { startedAt: 200, channel: 'whatsapp', status: 'handed_over', reason: 'customer_asked' }));
      await store().outcomes.put(outcome('w3', { startedAt: 300, customerId: 'cus_x' }));
      await store().outcomes.put(outcome('w4', { startedAt: 400, channel: 'whatsapp', customerId: 'cus_x', status: 'handed_over' }));
      const ids = (l: ConversationOutcome[]) => l.map((o) => o.conversationId);
      expect(ids(await store().outcomes.list({ limit: 10 }))).toEqual(['w4', 'w3', 'w2', 'w1']);
      expect(ids(await store().outcomes.list({ since: 200, until: 300, limit: 10 }))).toEqual(['w3', 'w2']);
      expect(ids(await store().outcomes.list({ channel: 'whatsapp', limit: 10 }))).toEqual(['w4', 'w2']);
      expect(ids(await store().outcomes.list({ status: 'handed_over', limit: 10 }))).toEqual(['w4', 'w2']);
      expect(ids(await store().outcomes.list({ customerId: 'cus_x', limit: 10 }))).toEqual(['w4', 'w3']);
      expect(ids(await store().outcomes.list({ channel: 'web', status: 'open', customerId: 'cus_x', limit: 10 }))).toEqual(['w3']);
      expect(ids(await store().outcomes.list({ limit: 2 }))).toEqual(['w4', 'w3']);
      // A record moved to a later start is listed under its new time only.
      await store().outcomes.put(outcome('w1', { startedAt: 500 }));
      expect(ids(await store().outcomes.list({ limit: 10 }))).toEqual(['w1', 'w4', 'w3', 'w2']);
    });

    it('joins a transaction: read back inside it, and nothing written when it throws', async () => {
      await expect(
        store().transaction(async (tx) => {
          await tx.outcomes.put(outcome('t1', { decideAt: 10 }));
          expect((await tx.outcomes.get('t1'))?.decideAt).toBe(10);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await store().outcomes.get('t1')).toBeUndefined();
      expect(await store().outcomes.due(100, 10)).toEqual([]);
      await store().transaction((tx) => tx.outcomes.put(outcome('t1', { decideAt: 10 })));
      expect(await store().outcomes.due(100, 10)).toEqual(['t1']);
    });
  });
}

for (const e of engines) describeOutcomesContract(e.name, e.open);
