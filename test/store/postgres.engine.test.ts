// What only the PostgreSQL engine has to get right: statement timeouts, a statement that fails inside a transaction,
// connections the server closes while idle, `tx` used after its transaction, and text PostgreSQL cannot hold.
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import type { Store, StoreRepos } from '../../src/store/repos.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';

describe('postgres: engine specifics', () => {
  let url: string;
  const opened: Store[] = [];
  beforeAll(async () => {
    url = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  const open = async (o: { statementTimeoutMs?: number } = {}) => {
    const s = await openPostgresStore(Object.assign({ url }, o));
    opened.push(s);
    return s;
  };

  it('a statement that waits past the statement timeout fails as unavailable (timeout), and the store recovers', async () => {
    const store = await open({ statementTimeoutMs: 300 });
    await store.customers.save({ customerId: 'cus_t', externalId: 'ext-t', createdAt: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = store.transaction(async (tx) => {
      await tx.customers.lock('cus_t');
      locked();
      await held;
    });
    await lockTaken;
    try {
      const err = await store
        .transaction((tx) => tx.customers.lock('cus_t'))
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as StoreUnavailableError).code).toBe('timeout');
      expect((err as Error).message).toMatch(/^PostgreSQL is unavailable \(timeout: statement_timeout\)/);
    } finally {
      release();
      await holder;
    }
    expect(await store.transaction((tx) => tx.customers.lock('cus_t'))).toBeDefined();
    expect(store.checks().database).toBe('ok');
  });

  it('a statement that failed inside a transaction fails the transaction even if the callback swallowed its error', async () => {
    const store = await open();
    const badCustomer = { customerId: 'cus_bad', externalId: 'ext-bad', createdAt: Number.NaN };
    const err = await store
      .transaction(async (tx) => {
        await tx.customers.save({ customerId: 'cus_ok', externalId: 'ext-ok', createdAt: 1 });
        await tx.customers.save(badCustomer).catch(() => undefined);
        return 'looks fine';
      })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(err?.message).toMatch(/invalid input syntax for type bigint: "NaN"/);
    expect(await store.customers.get('cus_ok')).toBeUndefined();
    // An SQL error is not the database being away.
    expect(store.checks().database).toBe('ok');
  });

  it('tx cannot be used once its transaction has ended', async () => {
    const store = await open();
    let leaked!: StoreRepos;
    await store.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked.customers.get('x')).rejects.toThrow(/a statement of a transaction that has ended/);
  });

  it('idle connections the server closes are dropped without harm; the next statement gets a new one', async () => {
    const store = await open();
    await Promise.all(Array.from({ length: 5 }, (_, i) => store.customers.get(`c${i}`))); // a few pooled connections
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const pooled = `FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'parley-%' AND query NOT LIKE 'LISTEN%'`;
      const { rows } = await admin.query<{ n: number }>(`SELECT count(pg_terminate_backend(pid))::int AS n ${pooled}`);
      expect(rows[0].n).toBeGreaterThan(0);
      // The backends end in their own time (later on a busy machine), closing their sockets as they go.
      await expect.poll(async () => (await admin.query<{ n: number }>(`SELECT count(*)::int AS n ${pooled}`)).rows[0].n, { timeout: 15_000 }).toBe(0);
    } finally {
      await admin.end();
    }
    await new Promise((resolve) => setTimeout(resolve, 200)); // the pool hears of it: the sockets' ends are here already
    expect(await store.customers.get('nobody')).toBeUndefined();
    expect(store.checks().database).toBe('ok');
  });

  it('U+0000, which PostgreSQL text cannot hold: kept exactly in JSON documents, shown as U+FFFD in message text', async () => {
    const store = await open();
    const snapshot = { context: { last: 'a\u0000b' } };
    await store.conversations.put({ conversationId: 'c0', customerId: 'cus', channel: 'web', snapshot, state: 'idle', busy: false, updatedAt: 1 });
    expect((await store.conversations.get('c0'))?.snapshot).toEqual(snapshot);
    await store.history.append({ id: 'm', conversationId: 'c0', role: 'user', text: 'a\u0000b', at: 1, data: { raw: '\u0000' } });
    const [m] = await store.history.recent('c0', 1);
    expect(m.text).toBe('a\uFFFDb');
    expect(m.data).toEqual({ raw: '\u0000' });
  });

  it('flushed resolves once the statements in flight have settled; close waits for them too', async () => {
    const store = await openPostgresStore({ url });
    let done = false;
    void store.customers.save({ customerId: 'cus_f', externalId: 'ext-f', createdAt: 1 }).then(() => {
      done = true;
    });
    await store.flushed();
    expect(done).toBe(true);
    const pending = store.customers.save({ customerId: 'cus_g', externalId: 'ext-g', createdAt: 1 });
    await store.close();
    await pending;
    const again = await open();
    expect(await again.customers.get('cus_g')).toBeDefined();
    await expect(store.customers.get('cus_g')).rejects.toThrow(StoreUnavailableError);
  });
});
