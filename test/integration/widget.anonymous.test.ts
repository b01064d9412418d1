// Anonymous widget init (identity.allow_anonymous) may resume only the
// anonymous customer it created, with the same email: it can never take over
// another customer's conversation.
import { afterEach, describe, expect, it } from 'vitest';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function init(p: TestParley, frame: Record<string, unknown>) {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', ...frame });
  const first = await w.next((f) => f.type === 'ready' || f.type === 'error');
  return { w, first };
}

describe('anonymous widget init', () => {
  it('resumes its own customer with the same email (any case), and refuses another email', async () => {
    const p = await startParley();
    open.push(p);
    const a = await init(p, { customerId: 'anon-1', email: 'ann@example.com' });
    expect(a.first).toMatchObject({ type: 'ready', customerId: 'anon-1' });
    a.w.send({ type: 'message', id: 'm1', text: 'my secret order is 1001' });
    await a.w.next((f) => f.type === 'message');

    const again = await init(p, { customerId: 'anon-1', email: 'ANN@example.com' });
    expect(again.first).toMatchObject({ type: 'ready', customerId: 'anon-1' });
    expect(again.first.history.length).toBe(2);

    const intruder = await init(p, { customerId: 'anon-1', email: 'mallory@example.com' });
    expect(intruder.first).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect((await intruder.w.closed).code).toBe(4001);
    expect(intruder.w.frames.some((f) => f.type === 'ready')).toBe(false);
  });

  it('never takes over a token-bound customer, by its customerId or by its externalId', async () => {
    const p = await startParley();
    open.push(p);
    const customers = createCustomerRepo(p.services.store, p.services.clock);
    // As a magic-link sign-in creates it: a generated customerId, the integrator's externalId.
    const bob = await customers.upsert({ externalId: 'bob', email: 'bob@example.com' });
    expect(bob.customerId).not.toBe('bob');
    for (const customerId of [bob.customerId, 'bob']) {
      const r = await init(p, { customerId, email: 'bob@example.com' });
      expect(r.first, customerId).toMatchObject({ type: 'error', code: 'unauthorized' });
      expect((await r.w.closed).code).toBe(4001);
    }
    // A WhatsApp customer (externalId = phone) likewise.
    const wa = await customers.upsert({ externalId: '+15550001111', phone: '+15550001111' });
    const r = await init(p, { customerId: wa.customerId, email: 'x@example.com' });
    expect(r.first).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect(customers.get(bob.customerId)?.email).toBe('bob@example.com');
    expect(customers.get(wa.customerId)?.email).toBeUndefined();
  });
});
