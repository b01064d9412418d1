// Contract: CustomerStore (src/store/repos.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import type { Customer } from '../../src/store/model.ts';
import type { Store } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines } from './engines.ts';

export function describeCustomersContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: customers`, () => {
    const store = freshStore(open);

    const ada: Customer = {
      customerId: 'cus_ada',
      externalId: 'ext-ada',
      email: 'Ada@Example.COM',
      phone: '+15550001',
      createdAt: 1000,
      optIn: true,
      lastInboundAt: { web: 2000, whatsapp: 3000 },
    };

    it('nothing is found before anything is saved', async () => {
      expect(await store().customers.get('cus_ada')).toBeUndefined();
      expect(await store().customers.findBy('ext', 'ext-ada')).toBeUndefined();
      expect(await store().customers.findBy('email', 'ada@example.com')).toBeUndefined();
    });

    it('a saved customer comes back whole, by id and by each identity', async () => {
      await store().customers.save(ada);
      expect(await store().customers.get('cus_ada')).toEqual(ada);
      expect(await store().customers.findBy('ext', 'ext-ada')).toEqual(ada);
      expect(await store().customers.findBy('phone', '+15550001')).toEqual(ada);
      const bare: Customer = { customerId: 'cus_bare', externalId: 'ext-bare', createdAt: 5 };
      await store().customers.save(bare);
      expect(await store().customers.get('cus_bare')).toEqual(bare);
      expect(await store().customers.findBy('ext', 'ext-ada')).toEqual(ada);
      // One channel only: the other stays absent.
      const webOnly: Customer = { customerId: 'cus_web', externalId: 'ext-web', createdAt: 6, lastInboundAt: { web: 7 }, optIn: false };
      await store().customers.save(webOnly);
      expect(await store().customers.get('cus_web')).toEqual(webOnly);
    });

    it('the contact address a customer left comes back, is replaced, survives a save without it, and is never an identity', async () => {
      expect(await store().customers.setContact('cus_nobody', { email: 'x@example.com', at: 1 })).toBe(false);
      await store().customers.save(ada);
      expect(await store().customers.setContact('cus_ada', { email: 'reply-here@example.com', at: 4000 })).toBe(true);
      expect(await store().customers.get('cus_ada')).toEqual(Object.assign({}, ada, { contact: { email: 'reply-here@example.com', at: 4000 } }));
      expect(await store().customers.setContact('cus_ada', { email: 'other@example.com', at: 5000 })).toBe(true);
      // A save with a record read before (or built without it) keeps the stored contact: only setContact writes it.
      await store().customers.save(Object.assign({}, ada, { optIn: false }), ada);
      expect(await store().customers.get('cus_ada')).toEqual(Object.assign({}, ada, { optIn: false, contact: { email: 'other@example.com', at: 5000 } }));
      expect((await store().customers.findBy('ext', 'ext-ada'))?.contact).toEqual({ email: 'other@example.com', at: 5000 });
      expect(await store().customers.findBy('email', 'other@example.com')).toBeUndefined();
    });

    it('emails are found case-insensitively and kept as written', async () => {
      await store().customers.save(ada);
      expect((await store().customers.findBy('email', 'ada@example.com'))?.customerId).toBe('cus_ada');
      expect((await store().customers.findBy('email', 'ADA@EXAMPLE.COM'))?.customerId).toBe('cus_ada');
      expect((await store().customers.get('cus_ada'))?.email).toBe('Ada@Example.COM');
      // Only emails: an externalId is matched exactly.
      expect(await store().customers.findBy('ext', 'EXT-ADA')).toBeUndefined();
    });

    it('saving again updates the record; identities the previous record had and the new one lacks are released', async () => {
      await store().customers.save(ada);
      const next: Customer = Object.assign({}, ada, { email: 'ada@new.example', optIn: false });
      delete next.phone;
      await store().customers.save(next, ada);
      expect(await store().customers.get('cus_ada')).toEqual(next);
      expect(await store().customers.findBy('email', 'ada@example.com')).toBeUndefined();
      expect(await store().customers.findBy('phone', '+15550001')).toBeUndefined();
      expect((await store().customers.findBy('email', 'ADA@new.example'))?.customerId).toBe('cus_ada');
      expect((await store().customers.findBy('ext', 'ext-ada'))?.customerId).toBe('cus_ada');
    });

    it('an identity another customer holds is taken over, and releasing it later does not take it from its new owner', async () => {
      await store().customers.save(ada);
      const bob: Customer = { customerId: 'cus_bob', externalId: 'ext-bob', phone: '+15550001', createdAt: 2000 };
      await store().customers.save(bob);
      expect((await store().customers.findBy('phone', '+15550001'))?.customerId).toBe('cus_bob');
      expect((await store().customers.findBy('ext', 'ext-ada'))?.customerId).toBe('cus_ada');
      // Ada's record still names the phone until she is saved without it; that save releases nothing of Bob's.
      const adaWithoutPhone: Customer = Object.assign({}, ada);
      delete adaWithoutPhone.phone;
      await store().customers.save(adaWithoutPhone, ada);
      expect((await store().customers.findBy('phone', '+15550001'))?.customerId).toBe('cus_bob');
    });

    it('the WhatsApp business number a customer last wrote to comes back, changes, and is cleared by a save without it', async () => {
      const wrote: Customer = Object.assign({}, ada, { businessNumberId: '106540352242922' });
      await store().customers.save(wrote);
      expect(await store().customers.get('cus_ada')).toEqual(wrote);
      expect((await store().customers.findBy('phone', '+15550001'))?.businessNumberId).toBe('106540352242922');
      const moved: Customer = Object.assign({}, wrote, { businessNumberId: '123456123' });
      await store().transaction(async (tx) => tx.customers.save(moved, wrote));
      expect((await store().customers.get('cus_ada'))?.businessNumberId).toBe('123456123');
      await store().customers.save(ada, moved);
      expect(await store().customers.get('cus_ada')).toEqual(ada);
      // Not an identity: nobody is found by it.
      expect(await store().customers.findBy('phone', '123456123')).toBeUndefined();
    });

    it('lock returns the customer inside a transaction, and undefined for an unknown one', async () => {
      await store().customers.save(ada);
      const [locked, unknown] = await store().transaction(async (tx) => [await tx.customers.lock('cus_ada'), await tx.customers.lock('cus_nobody')]);
      expect(locked).toEqual(ada);
      expect(unknown).toBeUndefined();
    });

    it('lock makes read-modify-write exact: 40 concurrent increments give 40', async () => {
      await store().customers.save({ customerId: 'cus_n', externalId: 'ext-n', createdAt: 0, lastInboundAt: { web: 0 } });
      await warmUp(store());
      await concurrently(40, () =>
        store().transaction(async (tx) => {
          const c = await tx.customers.lock('cus_n');
          if (!c) throw new Error('missing');
          await tx.customers.save(Object.assign({}, c, { lastInboundAt: { web: (c.lastInboundAt?.web ?? 0) + 1 } }), c);
        }),
      );
      expect((await store().customers.get('cus_n'))?.lastInboundAt?.web).toBe(40);
    });

    it('lockIdentity makes find-or-create by externalId create one customer under 50 concurrent callers', async () => {
      await warmUp(store());
      const ids = await concurrently(50, (i) =>
        store().transaction(async (tx) => {
          await tx.customers.lockIdentity('ext', 'ext-new');
          const found = await tx.customers.findBy('ext', 'ext-new');
          if (found) return found.customerId;
          await tx.customers.save({ customerId: `cus_${i}`, externalId: 'ext-new', createdAt: i });
          return `cus_${i}`;
        }),
      );
      expect(new Set(ids).size).toBe(1);
      expect((await store().customers.findBy('ext', 'ext-new'))?.customerId).toBe(ids[0]);
    });

    it('lockIdentity matches emails case-insensitively', async () => {
      await warmUp(store());
      const ids = await concurrently(20, (i) =>
        store().transaction(async (tx) => {
          const email = i % 2 ? 'New@Example.com' : 'new@example.COM';
          await tx.customers.lockIdentity('email', email);
          const found = await tx.customers.findBy('email', email);
          if (found) return found.customerId;
          await tx.customers.save({ customerId: `cus_${i}`, externalId: `ext-${i}`, email, createdAt: i });
          return `cus_${i}`;
        }),
      );
      expect(new Set(ids).size).toBe(1);
    });
  });
}

for (const e of engines) describeCustomersContract(e.name, e.open);
