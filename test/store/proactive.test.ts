// Contract: ProactiveStore (src/store/repos.ts), on every engine of engines.ts; the guardrails' exactness under
// concurrency (lock the customer, then check and record, in one transaction).
import { describe, expect, it } from 'vitest';
import type { Store, StoreRepos } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines } from './engines.ts';

const HOUR = 3_600_000;

export function describeProactiveContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: proactive`, () => {
    const store = freshStore(open);

    it('dedupSentAt: when the key was last accepted for this customer', async () => {
      expect(await store().proactive.dedupSentAt('cus_1', 'promo')).toBeUndefined();
      await store().proactive.recordSend({ customerId: 'cus_1', messageId: 'pm_1', at: 1000, channel: 'web', dedupKey: 'promo' });
      expect(await store().proactive.dedupSentAt('cus_1', 'promo')).toBe(1000);
      expect(await store().proactive.dedupSentAt('cus_2', 'promo')).toBeUndefined();
      expect(await store().proactive.dedupSentAt('cus_1', 'other')).toBeUndefined();
      await store().proactive.recordSend({ customerId: 'cus_1', messageId: 'pm_2', at: 5000, channel: 'whatsapp', dedupKey: 'promo' });
      expect(await store().proactive.dedupSentAt('cus_1', 'promo')).toBe(5000);
    });

    it('countSentAfter counts this customer’s sends strictly after the given time, with or without a dedup key', async () => {
      for (const [i, at] of [100, 200, 300].entries()) {
        await store().proactive.recordSend({ customerId: 'cus_1', messageId: `pm_${i}`, at, channel: 'web', dedupKey: i === 0 ? 'k' : undefined });
      }
      await store().proactive.recordSend({ customerId: 'cus_2', messageId: 'pm_x', at: 300, channel: 'web' });
      expect(await store().proactive.countSentAfter('cus_1', 0)).toBe(3);
      expect(await store().proactive.countSentAfter('cus_1', 100)).toBe(2);
      expect(await store().proactive.countSentAfter('cus_1', 300)).toBe(0);
      expect(await store().proactive.countSentAfter('cus_3', 0)).toBe(0);
      // Two sends at the same instant both count.
      await store().proactive.recordSend({ customerId: 'cus_1', messageId: 'pm_same', at: 300, channel: 'web' });
      expect(await store().proactive.countSentAfter('cus_1', 200)).toBe(2);
    });

    it('prune drops dedup keys past the dedup window and sends past the cap window (edges included), and counts them', async () => {
      const now = 100 * HOUR;
      const send = (messageId: string, at: number, dedupKey: string) =>
        store().proactive.recordSend({ customerId: 'c', messageId, at, channel: 'web', dedupKey });
      await send('a', now - 24 * HOUR, 'old'); // both windows over: key and send go
      await send('b', now - 2 * HOUR, 'edge'); // the dedup window just over: the key goes, the send stays
      await send('c', now - 2 * HOUR + 1, 'young'); // both stay
      expect(await store().proactive.prune({ now, dedupWindowMs: 2 * HOUR, capWindowMs: 24 * HOUR })).toBe(3);
      expect(await store().proactive.dedupSentAt('c', 'old')).toBeUndefined();
      expect(await store().proactive.dedupSentAt('c', 'edge')).toBeUndefined();
      expect(await store().proactive.dedupSentAt('c', 'young')).toBe(now - 2 * HOUR + 1);
      expect(await store().proactive.countSentAfter('c', 0)).toBe(2);
      expect(await store().proactive.prune({ now, dedupWindowMs: 2 * HOUR, capWindowMs: 24 * HOUR })).toBe(0);
    });

    /** The ledger's decision: dedup, then the cap, under the customer's lock. */
    const reserve = (tx: StoreRepos, o: { customerId: string; messageId: string; dedupKey?: string; cap: number; now: number }) =>
      (async () => {
        await tx.customers.lock(o.customerId);
        if (o.dedupKey !== undefined && (await tx.proactive.dedupSentAt(o.customerId, o.dedupKey)) !== undefined) return false;
        if ((await tx.proactive.countSentAfter(o.customerId, o.now - 24 * HOUR)) >= o.cap) return false;
        await tx.proactive.recordSend({ customerId: o.customerId, messageId: o.messageId, at: o.now, channel: 'web', dedupKey: o.dedupKey });
        return true;
      })();

    it('the cap is exact under concurrency: 100 concurrent "reserve if fewer than 3" accept exactly 3', async () => {
      await store().customers.save({ customerId: 'cus_1', externalId: 'ext-1', createdAt: 0 });
      await warmUp(store());
      const results = await concurrently(100, (i) =>
        store().transaction((tx) => reserve(tx, { customerId: 'cus_1', messageId: `pm_${i}`, cap: 3, now: 10 * HOUR })),
      );
      expect(results.filter(Boolean)).toHaveLength(3);
      expect(await store().proactive.countSentAfter('cus_1', 0)).toBe(3);
    });

    it('the dedup key is exact under concurrency: 200 concurrent sends with one key accept exactly 1', async () => {
      await store().customers.save({ customerId: 'cus_1', externalId: 'ext-1', createdAt: 0 });
      await warmUp(store());
      const results = await concurrently(200, (i) =>
        store().transaction((tx) => reserve(tx, { customerId: 'cus_1', messageId: `pm_${i}`, dedupKey: 'same', cap: 1000, now: 10 * HOUR })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store().proactive.countSentAfter('cus_1', 0)).toBe(1);
    });
  });
}

for (const e of engines) describeProactiveContract(e.name, e.open);
