// Contract: InboxStore and ClusterBus (src/store/repos.ts, the cluster block), on every engine of engines.ts.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BUS_NOTICE_BYTES, type InboxEvent, type Store } from '../../src/store/repos.ts';
import { freshStore } from './contract.ts';
import { engines } from './engines.ts';

const customerEvent = (messageId: string): InboxEvent => ({
  type: 'customer',
  customerId: 'cus_1',
  externalId: 'ext_1',
  channel: 'web',
  message: { messageId, text: `text of ${messageId}` },
});
const load = { sdkConnections: 0, sdkFunctions: 0, conversations: 0 };
/** Stored and delivered things may take long on a busy machine: wait for them generously. */
const DEADLINE = { timeout: 15_000 };

export function describeInboxContract(engine: string, open: () => Promise<Store>, sibling: (first: Store) => Promise<Store>) {
  describe(`${engine}: the conversation inbox`, () => {
    const store = freshStore(open);

    it('entries come back per conversation in the order posted, with growing ids; remove in a transaction takes them', async () => {
      const a1 = await store().inbox.post('c1', customerEvent('m1'), 10);
      const b1 = await store().inbox.post('c2', { type: 'confirm', confirmationId: 'k1', approve: true }, 11);
      const a2 = await store().inbox.post('c1', { type: 'agent', message: { id: 'g1', text: 'hi', author: { name: 'Ann' } } }, 12);
      expect(a1.id).toBeLessThan(b1.id);
      expect(b1.id).toBeLessThan(a2.id);
      expect(await store().inbox.list('c1')).toEqual([a1, a2]);
      expect(await store().inbox.list('c2')).toEqual([b1]);
      expect(await store().inbox.list('c3')).toEqual([]);

      await expect(
        store().transaction(async (tx) => {
          await tx.inbox.remove([a1.id]);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await store().inbox.list('c1')).toEqual([a1, a2]);
      await store().transaction((tx) => tx.inbox.remove([a1.id, b1.id]));
      expect(await store().inbox.list('c1')).toEqual([a2]);
      expect(await store().inbox.list('c2')).toEqual([]);
    });

    it('unattended: conversations with entries and no live owner, oldest entry first', async () => {
      const live = { nodeId: 'live', instance: randomUUID(), leaseMs: 10_000, load };
      // Long enough for the steps before the first look on a busy machine; then its end is waited for.
      const dying = { nodeId: 'dying', instance: randomUUID(), leaseMs: 2000, load };
      expect(await store().nodes.join(live)).toBe(true);
      expect(await store().nodes.join(dying)).toBe(true);
      await store().ownership.claim('owned-live', 'live');
      await store().ownership.claim('owned-dying', 'dying');
      await store().inbox.post('owned-dying', customerEvent('m1'), 1);
      await store().inbox.post('nobody', customerEvent('m2'), 2);
      await store().inbox.post('owned-live', customerEvent('m3'), 3);
      await store().inbox.post('owned-dying', customerEvent('m4'), 4);
      expect(await store().inbox.unattended(10)).toEqual(['nobody']);
      await expect.poll(() => store().inbox.unattended(10), DEADLINE).toEqual(['owned-dying', 'nobody']);
      expect(await store().inbox.unattended(1)).toEqual(['owned-dying']);
    });

    it('overdue: conversations the node owns with an entry posted before the time given, oldest entry first', async () => {
      const here = { nodeId: 'here', instance: randomUUID(), leaseMs: 10_000, load };
      const there = { nodeId: 'there', instance: randomUUID(), leaseMs: 10_000, load };
      expect(await store().nodes.join(here)).toBe(true);
      expect(await store().nodes.join(there)).toBe(true);
      for (const c of ['a', 'b', 'fresh']) await store().ownership.claim(c, 'here');
      await store().ownership.claim('theirs', 'there');
      await store().inbox.post('b', customerEvent('m1'), 100);
      await store().inbox.post('theirs', customerEvent('m2'), 100);
      await store().inbox.post('a', customerEvent('m3'), 150);
      await store().inbox.post('b', customerEvent('m4'), 900);
      await store().inbox.post('fresh', customerEvent('m5'), 900);
      await store().inbox.post('nobody', customerEvent('m6'), 100);
      expect(await store().inbox.overdue('here', 500, 10)).toEqual(['b', 'a']);
      expect(await store().inbox.overdue('here', 500, 1)).toEqual(['b']);
      expect(await store().inbox.overdue('here', 100, 10)).toEqual([]);
      expect(await store().inbox.overdue('there', 500, 10)).toEqual(['theirs']);
      const [first] = await store().inbox.list('b');
      await store().transaction((tx) => tx.inbox.remove([first.id]));
      expect(await store().inbox.overdue('here', 500, 10)).toEqual(['a']);
    });
  });

  describe(`${engine}: the cluster bus`, () => {
    const store = freshStore(open);

    it('a message reaches every subscriber of its topic, on this store and on another one of the same database; long ones too', async () => {
      const other = await sibling(store());
      try {
        const here: string[] = [];
        const there: string[] = [];
        const elsewhere: string[] = [];
        const stops = [
          store().bus.subscribe('t1', (p) => here.push(p)),
          other.bus.subscribe('t1', (p) => there.push(p)),
          other.bus.subscribe('t2', (p) => elsewhere.push(p)),
        ];
        await expect.poll(() => store().bus.listening() && other.bus.listening(), DEADLINE).toBe(true);
        const long = 'é'.repeat(BUS_NOTICE_BYTES); // twice the notice limit in bytes
        await store().bus.publish('t1', 'hello');
        await other.bus.publish('t1', long);
        await expect.poll(() => there.length, DEADLINE).toBe(2);
        await expect.poll(() => here.length, DEADLINE).toBe(2);
        expect(here).toEqual(['hello', long]);
        expect(there).toEqual(['hello', long]);
        expect(elsewhere).toEqual([]);
        for (const stop of stops) stop();
        // A subscriber that stays hears 'after'; by then a stopped one would have too.
        const witness: string[] = [];
        const stopWitness = store().bus.subscribe('t1', (p) => witness.push(p));
        await expect.poll(() => store().bus.listening(), DEADLINE).toBe(true);
        await store().bus.publish('t1', 'after');
        await expect.poll(() => witness, DEADLINE).toEqual(['after']);
        stopWitness();
        expect(here).toHaveLength(2);
      } finally {
        if (other !== store()) await other.close();
      }
    });
  });
}

for (const e of engines) describeInboxContract(e.name, e.open, e.sibling);
