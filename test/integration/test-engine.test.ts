// The harness itself: in the postgres project every whole-Parley test really runs on PostgreSQL (a database named
// after its storage path, the same one after a restart), and on LMDB in the lmdb project.
import { afterEach, describe, expect, it } from 'vitest';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { startParley, tempDir } from '../support/parley.ts';
import { testEngine } from '../support/test-engine.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe(`the run's engine (${testEngine()})`, () => {
  it('startParley runs on it, and a restart on the same storage path finds the same data', async () => {
    const storagePath = tempDir();
    const first = await startParley({ storagePath });
    open.push(first);
    expect(first.services.store.engine).toBe(testEngine());
    const ready = await (await fetch(`${first.url()}/ready`)).json();
    expect(ready.checks.database).toBe('ok');
    if (testEngine() === 'postgres') expect(first.services.config.storage.url).toMatch(/^postgres:\/\/.*\/t_[0-9a-f]{24}$/);
    await createCustomerRepo(first.services.store, first.services.clock).upsert({
      externalId: 'engine-check',
      customerId: 'engine-check',
      email: 'e@example.com',
    });
    await first.close();
    open.pop();

    const second = await startParley({ storagePath });
    open.push(second);
    expect(await second.services.store.customers.findBy('ext', 'engine-check')).toMatchObject({ customerId: 'engine-check', email: 'e@example.com' });
  });
});
