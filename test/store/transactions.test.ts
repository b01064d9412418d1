// Contract: Store.transaction (src/store/repos.ts), on every engine of engines.ts: all or nothing across
// repositories, reads through `tx` see the transaction's own writes, the callback's result and error come back.
import { describe, expect, it } from 'vitest';
import type { ConversationRecord } from '../../src/store/model.ts';
import type { Store, StoreRepos } from '../../src/store/repos.ts';
import { freshStore } from './contract.ts';
import { engines } from './engines.ts';

const conversation: ConversationRecord = {
  conversationId: 'conv_1',
  customerId: 'cus_1',
  channel: 'web',
  snapshot: { value: 'idle' },
  state: 'idle',
  busy: false,
  updatedAt: 10,
  lastMessageAt: 10,
};
const customer = { customerId: 'cus_1', externalId: 'ext-1', createdAt: 1 };

/** One write to each repository. */
async function writeEverywhere(tx: StoreRepos) {
  await tx.customers.save(customer);
  await tx.conversations.lock('conv_1');
  await tx.conversations.put(conversation);
  await tx.history.append({ id: 'm1', conversationId: 'conv_1', role: 'user', text: 'hi', at: 10 });
  await tx.links.insert('hash', { email: 'a@b.c', externalId: 'ext-1', expiresAt: 100 });
  await tx.proactive.recordSend({ customerId: 'cus_1', messageId: 'pm_1', at: 10, channel: 'web', dedupKey: 'k' });
  await tx.jobs.insert('q', { id: 'job-1', key: 'k', payload: {}, attempts: 0, runAt: 10, enqueuedAt: 10 });
  await tx.whatsapp.markHandled('wamid.1', 10);
}

export function describeTransactionsContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: transactions`, () => {
    const store = freshStore(open);

    it('commits every repository’s writes together and resolves with the callback’s result', async () => {
      const result = await store().transaction(async (tx) => {
        await writeEverywhere(tx);
        return { done: true };
      });
      expect(result).toEqual({ done: true });
      expect(await store().customers.findBy('ext', 'ext-1')).toEqual(customer);
      expect(await store().conversations.get('conv_1')).toEqual(conversation);
      expect(await store().history.seen('conv_1', 'm1')).toBe(true);
      expect(await store().proactive.dedupSentAt('cus_1', 'k')).toBe(10);
      expect(await store().jobs.knows('q', 'job-1')).toBe(true);
      expect(await store().whatsapp.handled('wamid.1')).toBe(true);
      expect(await store().transaction((tx) => tx.links.lock('hash'))).toBeDefined();
    });

    it('a callback that throws writes nothing, and its own error comes back', async () => {
      const boom = new Error('changed my mind');
      await expect(
        store().transaction(async (tx) => {
          await writeEverywhere(tx);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store().customers.get('cus_1')).toBeUndefined();
      expect(await store().customers.findBy('ext', 'ext-1')).toBeUndefined();
      expect(await store().conversations.get('conv_1')).toBeUndefined();
      expect(await store().history.recent('conv_1', 10)).toEqual([]);
      expect(await store().proactive.countSentAfter('cus_1', 0)).toBe(0);
      expect(await store().jobs.knows('q', 'job-1')).toBe(false);
      expect(await store().whatsapp.handled('wamid.1')).toBe(false);
      expect(await store().transaction((tx) => tx.links.lock('hash'))).toBeUndefined();
      // The store is fine afterwards.
      await store().transaction(writeEverywhere);
      expect(await store().customers.get('cus_1')).toEqual(customer);
    });

    it('reads through tx see the transaction’s own writes', async () => {
      const seenInside = await store().transaction(async (tx) => {
        await writeEverywhere(tx);
        return {
          customer: await tx.customers.findBy('ext', 'ext-1'),
          conversation: await tx.conversations.get('conv_1'),
          history: await tx.history.recent('conv_1', 10),
          seen: await tx.history.seen('conv_1', 'm1'),
          sent: await tx.proactive.countSentAfter('cus_1', 0),
          job: await tx.jobs.knows('q', 'job-1'),
          duplicate: await tx.jobs.insert('q', { id: 'job-1', key: 'k', payload: {}, attempts: 0, runAt: 10, enqueuedAt: 10 }),
          handled: await tx.whatsapp.handled('wamid.1'),
        };
      });
      expect(seenInside).toEqual({
        customer,
        conversation,
        history: [{ id: 'm1', conversationId: 'conv_1', role: 'user', text: 'hi', at: 10 }],
        seen: true,
        sent: 1,
        job: true,
        duplicate: undefined,
        handled: true,
      });
    });

    it('a transaction’s writes are not seen outside it before it commits', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let written!: () => void;
      const wrote = new Promise<void>((resolve) => {
        written = resolve;
      });
      const tx = store().transaction(async (t) => {
        await t.customers.save(customer);
        written();
        await gate;
      });
      await wrote;
      expect(await store().customers.get('cus_1')).toBeUndefined();
      release();
      await tx;
      expect(await store().customers.get('cus_1')).toEqual(customer);
    });
  });
}

for (const e of engines) describeTransactionsContract(e.name, e.open);
