// A process paused in the middle of a transaction (SIGSTOP, a frozen VM, a stalled event loop) must not hold the rows
// it locked from everyone else: PostgreSQL ends such a session after `idleInTransactionTimeoutMs`, the other node's
// statement gets the lock, and the paused side's next statement fails as "unavailable" (its work is tried again,
// nothing of it was committed). Two stores on one real database play the two nodes; the paused one simply awaits
// inside its transaction, which is what a stopped process looks like from the server.
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import type { Store } from '../../src/store/repos.ts';
import { createMigratedTestDatabase } from '../support/shared-postgres.ts';

const customer = { customerId: 'cus_paused', externalId: 'ext-paused', createdAt: 1 };
const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function open(url: string, idleInTransactionTimeoutMs?: number): Promise<Store> {
  const store = await openPostgresStore({ url, idleInTransactionTimeoutMs });
  stores.push(store);
  return store;
}

describe('postgres: a transaction left open by a paused process', () => {
  it('is ended by the server: the other node’s write gets the lock, and the paused side’s next statement fails as unavailable', async () => {
    const url = await createMigratedTestDatabase();
    const paused = await open(url, 500);
    const other = await open(url);
    await other.customers.save(customer);

    let lockHeld!: () => void;
    const locked = new Promise<void>((resolve) => (lockHeld = resolve));
    let othersDone!: () => void;
    const othersFinished = new Promise<void>((resolve) => (othersDone = resolve));
    const pausedWork = paused.transaction(async (tx) => {
      await tx.customers.save({ ...customer, email: 'paused@example.com' });
      lockHeld();
      // "Paused": nothing more is sent until the other node's write is through (or has failed).
      await othersFinished;
      await tx.customers.save({ ...customer, email: 'late@example.com' });
    });
    await locked;
    const startedAt = Date.now();
    const othersWrite = other.customers
      .save({ ...customer, email: 'other@example.com' })
      .then(() => Date.now() - startedAt)
      .finally(othersDone);

    // Without the timeout this waits for the row until its statement timeout (10 s) and fails.
    const waitedMs = await othersWrite;
    expect(waitedMs).toBeLessThan(9000);
    const err = await pausedWork.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((await other.customers.get('cus_paused'))?.email).toBe('other@example.com');
    // The paused side's store serves again on a fresh connection.
    expect((await paused.customers.get('cus_paused'))?.email).toBe('other@example.com');
  });
});
