// The PostgreSQL engine when the database goes away and comes back: a real server of this test's own, stopped and
// started again. Every operation meanwhile fails with StoreUnavailableError (features treat it as "try again later"),
// `checks().database` names the cause, and the first answer afterwards clears it and calls the onRecovered listeners.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { StoreOpenError, StoreUnavailableError } from '../../src/store/errors.ts';
import type { Store } from '../../src/store/repos.ts';
import type { Db } from '../../src/store/postgres/db.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { createPostgresTelemetryWriter } from '../../src/store/postgres/telemetry-writer.ts';
import { asStoreError } from '../../src/store/postgres/unavailable.ts';
import { createDatabase, startPostgres, type TestPostgres } from '../support/postgres.ts';

const customer = { customerId: 'cus_1', externalId: 'ext-1', createdAt: 1 };

describe('postgres: the database goes away and comes back', () => {
  let server: TestPostgres;
  let url: string;
  beforeAll(async () => {
    server = await startPostgres();
    url = await createDatabase(server.url);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });
  afterEach(async () => {
    if (!server.running()) await server.restart();
  });

  const unavailable = async (work: Promise<unknown>) => {
    const err = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailableError);
    return err as StoreUnavailableError;
  };

  it('operations fail as unavailable while it is stopped, and everything works again once it is back', async () => {
    // A manual clock: no background probe, so recovery here is the next statement's doing.
    const store: Store = await openPostgresStore({ url, clock: createManualClock(0) });
    try {
      await store.customers.save(customer);
      const writer = store.telemetry.writer();
      const recovered = vi.fn();
      store.onRecovered(recovered);

      await server.stop();
      // The first statement may meet a pooled connection the server closed on its way down (`shutdown: 57P01`);
      // from then on nothing answers at all.
      const first = await unavailable(store.customers.get('cus_1'));
      expect(['unreachable', 'shutdown']).toContain(first.code);
      expect(store.checks().database).toMatch(/^(unreachable|shutdown): /);
      const err = await unavailable(store.customers.get('cus_1'));
      expect(err.code).toBe('unreachable');
      expect(err.message).toMatch(/^PostgreSQL is unavailable \(unreachable: ECONNREFUSED\)/);
      expect(store.checks().database).toBe('unreachable: ECONNREFUSED');
      expect(store.checks().migrations).toBe('ok');
      await unavailable(store.transaction((tx) => tx.customers.save(customer)));
      await unavailable(store.jobs.insert('q', { id: 'j', key: 'k', payload: {}, attempts: 0, runAt: 0, enqueuedAt: 0 }));
      // Telemetry added meanwhile is kept for the next flush.
      writer.addEvent({ id: '1795497313000-00000001', at: 1_795_497_313_000, type: 'during.outage', data: {} });
      await unavailable(writer.flush());
      expect(writer.pending()).toBe(1);
      expect(recovered).not.toHaveBeenCalled();

      await server.restart();
      expect(await store.customers.get('cus_1')).toEqual(customer);
      expect(store.checks().database).toBe('ok');
      expect(recovered).toHaveBeenCalledTimes(1);
      expect(await writer.flush()).toBe(1);
      const events = await store.telemetry.events({ limit: 10, order: 'asc' });
      expect(events.items.map((e) => e.type)).toEqual(['during.outage']);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('telemetry that waits for the database is bounded: past maxWaiting new records are dropped, the kept ones written once it is back', async () => {
    const pool = new pg.Pool({ connectionString: url });
    pool.on('error', () => undefined);
    // What the store's own connection does with a failure: an outage becomes a StoreUnavailableError.
    const db: Db = {
      rows: (s, values) =>
        pool.query({ text: s.text, values }).then(
          (r) => r.rows,
          (err: unknown) => Promise.reject(asStoreError(err)),
        ),
      announce: () => undefined,
    };
    const store = await openPostgresStore({ url, clock: createManualClock(0) });
    try {
      const writer = createPostgresTelemetryWriter(db, { maxWaiting: 3 });
      const event = (n: number) => ({ id: `1795497400000-0000000${n}`, at: 1_795_497_400_000 + n, type: `kept.${n}`, data: {} });
      await server.stop();
      writer.addEvent(event(1));
      writer.addEvent(event(2));
      await unavailable(writer.flush());
      expect(writer.pending()).toBe(2);
      for (let n = 3; n <= 6; n++) writer.addEvent(event(n));
      expect(writer.pending(), 'at most maxWaiting wait').toBe(3);
      await server.restart();
      expect(await writer.flush()).toBe(3);
      const events = await store.telemetry.events({ limit: 10, order: 'asc' });
      expect(events.items.map((e) => e.type).filter((t) => t.startsWith('kept.'))).toEqual(['kept.1', 'kept.2', 'kept.3']);
    } finally {
      await store.close();
      await pool.end();
    }
  }, 120_000);

  it('a transaction the database loses midway commits nothing and fails as unavailable', async () => {
    const store = await openPostgresStore({ url, clock: createManualClock(0) });
    try {
      let stopped!: () => void;
      const serverStopped = new Promise<void>((resolve) => {
        stopped = resolve;
      });
      let saved!: () => void;
      const wrote = new Promise<void>((resolve) => {
        saved = resolve;
      });
      const tx = store.transaction(async (t) => {
        await t.customers.save({ customerId: 'cus_mid', externalId: 'ext-mid', createdAt: 1 });
        saved();
        await serverStopped;
        await t.history.append({ id: 'm', conversationId: 'c', role: 'user', text: 'x', at: 1 });
      });
      await wrote;
      await server.stop();
      stopped();
      const err = await unavailable(tx);
      expect(['unreachable', 'shutdown']).toContain(err.code);
      expect(store.checks().database).not.toBe('ok');
      await server.restart();
      expect(await store.customers.get('cus_mid')).toBeUndefined();
      expect(store.checks().database).toBe('ok');
      // The pool dropped the broken connection: transactions work again.
      await store.transaction((t) => t.customers.save({ customerId: 'cus_after', externalId: 'ext-after', createdAt: 2 }));
      expect(await store.customers.get('cus_after')).toBeDefined();
    } finally {
      await store.close();
    }
  }, 120_000);

  it('with nothing to do, a probe notices the database is back and calls the listeners', async () => {
    const clock = createManualClock(0);
    const store = await openPostgresStore({ url, clock });
    try {
      const recovered = vi.fn();
      store.onRecovered(recovered);
      await server.stop();
      await unavailable(store.customers.get('x'));
      await server.restart();
      expect(store.checks().database).not.toBe('ok');
      clock.advance(1000); // the probe's interval while failing
      await vi.waitFor(() => expect(recovered).toHaveBeenCalledTimes(1), { timeout: 10_000 });
      expect(store.checks().database).toBe('ok');
    } finally {
      await store.close();
    }
  }, 120_000);

  it('with nothing to do, a probe notices the database went away', async () => {
    const clock = createManualClock(0);
    const store = await openPostgresStore({ url, clock });
    try {
      await server.stop();
      expect(store.checks().database).toBe('ok'); // nothing has asked yet
      clock.advance(5000); // idle that long: the liveness probe asks
      await vi.waitFor(() => expect(store.checks().database).toMatch(/^(unreachable|shutdown): /), { timeout: 10_000 });
      await server.restart();
    } finally {
      await store.close();
    }
  }, 120_000);

  it('opening a store on a server that is not there tries again for startRetryMs, then fails with one clear line, the password masked', async () => {
    await server.stop();
    try {
      const port = new URL(server.url).port;
      const began = Date.now();
      const err = await openPostgresStore({ url: `postgres://parley:s3cret@127.0.0.1:${port}/parley`, startRetryMs: 1500 }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(StoreOpenError);
      expect(err?.message).toBe(
        `cannot connect to PostgreSQL at postgres://parley:****@127.0.0.1:${port}/parley: connection refused: nothing is listening on 127.0.0.1:${port} (is PostgreSQL running, on that port?); tried for 1.5 s`,
      );
      expect(Date.now() - began, 'tried again for startRetryMs').toBeGreaterThanOrEqual(1000);
    } finally {
      await server.restart();
    }
  }, 120_000);
});
