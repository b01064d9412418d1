// Issue 18 part 2 and 3: WhatsApp identities (phone and BSUID) on a real LMDB store.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import type { Store } from '../../src/store/repos.ts';
import { openTestStore } from '../support/store.ts';

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function setup() {
  const store = await openTestStore();
  open.push(store);
  return createCustomerRepo(store, createManualClock(Date.UTC(2026, 4, 1)));
}

const B1 = 'US.13491208655302741918';
const B2 = 'US.77120033004455667788';

describe('resolveWhatsApp', () => {
  it('a BSUID-only user becomes a customer with the BSUID as externalId; the same BSUID finds it again', async () => {
    const customers = await setup();
    const c = await customers.resolveWhatsApp({ bsuid: B1 });
    expect(c).toMatchObject({ externalId: B1, bsuid: B1 });
    expect(c.phone).toBeUndefined();
    expect((await customers.resolveWhatsApp({ bsuid: B1 })).customerId).toBe(c.customerId);
    expect((await customers.findBy('ext', B1))?.customerId).toBe(c.customerId);
  });

  it('phone first, then phone + BSUID: the BSUID is linked to the phone customer; then the BSUID alone finds it', async () => {
    const customers = await setup();
    const c = await customers.resolveWhatsApp({ phone: '+15550001111' });
    await customers.resolveWhatsApp({ phone: '+15550001111', bsuid: B1 });
    expect((await customers.findBy('bsuid', B1))?.customerId).toBe(c.customerId);
    expect(await customers.resolveWhatsApp({ bsuid: B1 })).toMatchObject({ customerId: c.customerId, phone: '+15550001111', bsuid: B1 });
  });

  it('BSUID first, then phone + BSUID: the phone is linked to the BSUID customer', async () => {
    const customers = await setup();
    const c = await customers.resolveWhatsApp({ bsuid: B1 });
    await customers.resolveWhatsApp({ phone: '+15550001111', bsuid: B1 });
    expect((await customers.findBy('phone', '+15550001111'))?.customerId).toBe(c.customerId);
  });

  it('phone and BSUID on two customers: the phone customer (maybe linked to your CRM) takes the BSUID over', async () => {
    const customers = await setup();
    const crm = await customers.upsert({ externalId: 'crm-1', phone: '+15550001111' });
    const byBsuid = await customers.resolveWhatsApp({ bsuid: B1 });
    const c = await customers.resolveWhatsApp({ phone: '+15550001111', bsuid: B1 });
    expect(c.customerId).toBe(crm.customerId);
    expect((await customers.findBy('bsuid', B1))?.customerId).toBe(crm.customerId);
    expect((await customers.get(byBsuid.customerId))?.bsuid).toBeUndefined();
  });

  it('a customer your backend created with the phone as externalId is found, not duplicated', async () => {
    const customers = await setup();
    const c = await customers.upsert({ externalId: '+15550001111', email: 'x@example.com' });
    expect((await customers.resolveWhatsApp({ phone: '+15550001111' })).customerId).toBe(c.customerId);
    expect((await customers.findBy('phone', '+15550001111'))?.customerId).toBe(c.customerId);
  });
});

describe('changeWhatsAppIdentity', () => {
  it('a number change: the new phone and BSUID lead to the same customer; the old ones lead nowhere; the externalId stays', async () => {
    const customers = await setup();
    const c = await customers.resolveWhatsApp({ phone: '+16505551234', bsuid: B1 });
    const r = await customers.changeWhatsAppIdentity({ phone: '+16505551234', bsuid: B1 }, { phone: '+12195555358', bsuid: B2 });
    expect(r).toMatchObject({ changed: true, customer: { customerId: c.customerId, phone: '+12195555358', bsuid: B2, externalId: '+16505551234' } });
    expect((await customers.findBy('phone', '+12195555358'))?.customerId).toBe(c.customerId);
    expect((await customers.findBy('bsuid', B2))?.customerId).toBe(c.customerId);
    expect(await customers.findBy('phone', '+16505551234')).toBeUndefined();
    expect(await customers.findBy('bsuid', B1)).toBeUndefined();
    // Applied again (Meta redelivers): nothing changes.
    expect(await customers.changeWhatsAppIdentity({ phone: '+16505551234', bsuid: B1 }, { phone: '+12195555358', bsuid: B2 })).toMatchObject({
      changed: false,
      reason: 'already_applied',
    });
  });

  it('a BSUID change keeps the phone; a change for a user never seen changes nothing', async () => {
    const customers = await setup();
    const c = await customers.resolveWhatsApp({ phone: '+16505551234', bsuid: B1 });
    expect(await customers.changeWhatsAppIdentity({ bsuid: B1 }, { bsuid: B2 })).toMatchObject({
      changed: true,
      customer: { phone: '+16505551234', bsuid: B2 },
    });
    expect((await customers.findBy('phone', '+16505551234'))?.customerId).toBe(c.customerId);
    expect(await customers.changeWhatsAppIdentity({ bsuid: 'US.1' }, { bsuid: 'US.2' })).toEqual({ changed: false, reason: 'unknown_customer' });
    expect(await customers.findBy('bsuid', 'US.2')).toBeUndefined();
  });

  it('a new number that a WhatsApp-only customer held is taken over', async () => {
    const customers = await setup();
    const old = await customers.resolveWhatsApp({ phone: '+12195555358' });
    const c = await customers.resolveWhatsApp({ phone: '+16505551234' });
    await customers.changeWhatsAppIdentity({ phone: '+16505551234' }, { phone: '+12195555358' });
    expect((await customers.findBy('phone', '+12195555358'))?.customerId).toBe(c.customerId);
    expect((await customers.get(old.customerId))?.phone).toBeUndefined();
  });
});
