// The LMDB engine's key-value layer (src/store/lmdb/kv.ts) and its migrations, and the transaction semantics every
// repository relies on (src/store/repos.ts): atomic async callbacks, one at a time.
import { describe, expect, it } from 'vitest';
import { open } from 'lmdb';
import { migrate, schemaVersion, type Migration } from '../../src/store/lmdb/migrations.ts';
import { openKv, type KvScope } from '../../src/store/lmdb/kv.ts';
import type { Customer } from '../../src/store/model.ts';
import { openTestStore, TEST_DISK_RESERVE_MB } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

const customer = (customerId: string, externalId: string): Customer => ({ customerId, externalId, createdAt: 1 });

describe('LMDB store', () => {
  it('runs migrations in order once, and reports them in checks', async () => {
    const path = tempDir();
    const ran: number[] = [];
    const list: Migration[] = [
      { version: 2, description: 'b', up: async () => void ran.push(2) },
      { version: 1, description: 'a', up: async () => void ran.push(1) },
    ];
    const store = await openTestStore(path, { migrations: list });
    expect(ran).toEqual([1, 2]);
    expect(schemaVersion(store.kv)).toBe(2);
    expect(store.checks()).toEqual({ database: 'ok', migrations: 'ok' });
    await migrate(store.kv, list);
    expect(ran).toEqual([1, 2]);
    await store.close();
    const again = await openTestStore(path, { migrations: list });
    expect(ran).toEqual([1, 2]);
    await again.close();
  });

  it('a migration runs in one transaction: one that throws leaves its writes and the version unrecorded', async () => {
    const path = tempDir();
    const failing: Migration = {
      version: 1,
      description: 'x',
      async up(tx) {
        await tx.put('meta', 'half', true);
        throw new Error('migration broke');
      },
    };
    await expect(openTestStore(path, { migrations: [failing] })).rejects.toThrow('migration broke');
    const store = await openTestStore(path, { migrations: [] });
    expect(schemaVersion(store.kv)).toBe(0);
    expect(store.kv.get('meta', 'half')).toBeUndefined();
    await store.close();
  });

  it('refuses data written by a newer schema', async () => {
    const path = tempDir();
    const s = await openTestStore(path, { migrations: [{ version: 5, description: 'x', up: async () => {} }] });
    await s.close();
    await expect(openTestStore(path, { migrations: [{ version: 1, description: 'x', up: async () => {} }] })).rejects.toThrow(/newer than this build/);
  });

  it('writes survive close and reopen; range scans are ordered', async () => {
    const path = tempDir();
    const store = await openTestStore(path);
    const kv = store.kv.direct;
    await Promise.all([kv.put('messages', ['m', 'c', 2], 'two'), kv.put('messages', ['m', 'c', 1], 'one'), kv.put('messages', ['m', 'd', 1], 'other')]);
    await store.close();
    const again = await openTestStore(path);
    const rows = [...again.kv.range<string>('messages', { start: ['m', 'c'], end: ['m', 'c', Infinity] })].map((r) => r.value);
    expect(rows).toEqual(['one', 'two']);
    await again.close();
  });
});

describe('transactions', () => {
  it('are atomic and serialised: concurrent increments with an awaited step between read and write are exact', async () => {
    const store = await openTestStore();
    await Promise.all(
      Array.from({ length: 200 }, () =>
        store.kv.transaction(async (tx) => {
          const n = tx.get<number>('meta', 'n') ?? 0;
          await new Promise((r) => setImmediate(r)); // the event loop turns: other callers run meanwhile
          await tx.put('meta', 'n', n + 1);
        }),
      ),
    );
    expect(store.kv.get('meta', 'n')).toBe(200);
    await store.close();
  });

  it('two concurrent transactions run one after the other: the second starts once the first has settled', async () => {
    const store = await openTestStore();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = store.transaction(async (tx) => {
      order.push('first starts');
      await gate;
      await tx.customers.save(customer('c1', 'first'));
      order.push('first ends');
    });
    const second = store.transaction(async (tx) => {
      order.push('second starts');
      // It sees what the first committed.
      order.push(`second reads ${(await tx.customers.get('c1'))?.externalId}`);
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(order).toEqual(['first starts']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first starts', 'first ends', 'second starts', 'second reads first']);
    await store.close();
  });

  it('a callback that throws writes nothing; reads through tx see the transaction’s own writes', async () => {
    const store = await openTestStore();
    await expect(
      store.kv.transaction(async (tx) => {
        await tx.put('meta', 'a', 1);
        expect(tx.get('meta', 'a')).toBe(1);
        await tx.remove('meta', 'a');
        expect(tx.get('meta', 'a')).toBeUndefined();
        await tx.put('meta', 'b', 2);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(store.kv.get('meta', 'b')).toBeUndefined();
    // The same through the repositories, with awaited reads inside the transaction.
    await expect(
      store.transaction(async (tx) => {
        expect(await tx.customers.get('c1')).toBeUndefined();
        await tx.customers.save(customer('c1', 'ext-1'));
        expect((await tx.customers.get('c1'))?.externalId).toBe('ext-1');
        expect((await tx.customers.findBy('ext', 'ext-1'))?.customerId).toBe('c1');
        expect(await tx.history.append({ id: 'm1', conversationId: 'conv', role: 'user', text: 'hi', at: 1 })).toBe(1);
        expect(await tx.history.append({ id: 'm2', conversationId: 'conv', role: 'user', text: 'again', at: 2 })).toBe(2);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await store.customers.get('c1')).toBeUndefined();
    expect(await store.customers.findBy('ext', 'ext-1')).toBeUndefined();
    expect(await store.history.lastSeq('conv')).toBe(0);
    expect(await store.history.seen('conv', 'm1')).toBe(false);
    // A callback that returns commits everything at once.
    const seq = await store.transaction(async (tx) => {
      await tx.customers.save(customer('c1', 'ext-1'));
      return tx.history.append({ id: 'm1', conversationId: 'conv', role: 'user', text: 'hi', at: 1 });
    });
    expect(seq).toBe(1);
    expect((await store.customers.findBy('ext', 'ext-1'))?.customerId).toBe('c1');
    expect(await store.history.seen('conv', 'm1')).toBe(true);
    await store.close();
  });

  it('a transaction’s scope refuses writes once its callback has settled', async () => {
    const store = await openTestStore();
    let kept: KvScope | undefined;
    await store.kv.transaction(async (tx) => {
      kept = tx;
    });
    await expect(kept!.put('meta', 'late', 1)).rejects.toThrow(/after its transaction ended/);
    expect(store.kv.get('meta', 'late')).toBeUndefined();
    await store.close();
  });

  it('a transaction’s callback error is the caller’s: the store stays healthy', async () => {
    const store = await openTestStore();
    await expect(store.transaction(async () => Promise.reject(new Error('feature failed')))).rejects.toThrow('feature failed');
    expect(store.checks().database).toBe('ok');
    await store.close();
  });
});

describe('insertIfAbsent and writeBatch', () => {
  it('inserts once per guard key, atomically across tables, under concurrency; the result is durable', async () => {
    const path = tempDir();
    const store = await openTestStore(path);
    const attempts = Array.from({ length: 50 }, (_, i) =>
      store.kv.insertIfAbsent({ table: 'jobs', key: ['id', 'x'] }, [
        { table: 'jobs', key: ['id', 'x'], value: i },
        { table: 'webhookSeen', key: `x-${i}`, value: i },
      ]),
    );
    const results = await Promise.all(attempts);
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect(store.kv.get('jobs', ['id', 'x'])).toBe(winner);
    // The losers wrote nothing, in either table.
    expect([...store.kv.range('webhookSeen')].map((r) => r.key)).toEqual([`x-${winner}`]);
    expect(await store.kv.insertIfAbsent({ table: 'jobs', key: ['id', 'y'] }, [{ table: 'jobs', key: ['id', 'y'], value: 1 }])).toBe(true);
    await store.close();
    const again = await openTestStore(path);
    expect(again.kv.get('jobs', ['id', 'x'])).toBe(winner);
    expect(again.kv.get('jobs', ['id', 'y'])).toBe(1);
    await again.close();
  });

  it('writeBatch stores every write across tables; an unknown table is refused before anything is written', async () => {
    const path = tempDir();
    const store = await openTestStore(path);
    await store.kv.writeBatch([
      { table: 'telemetry', key: 'a', value: { n: 1 } },
      { table: 'turnCalls', key: 'b', value: ['x', 'y'] },
    ]);
    await store.kv.writeBatch([]);
    const bad = [
      { table: 'meta', key: 'k', value: 1 },
      { table: 'nope', key: 'k', value: 1 },
    ] as unknown as Parameters<typeof store.kv.writeBatch>[0];
    await expect(store.kv.writeBatch(bad)).rejects.toThrow(/unknown table nope/);
    await store.close();
    const again = await openTestStore(path);
    expect(again.kv.get('telemetry', 'a')).toEqual({ n: 1 });
    expect(again.kv.get('turnCalls', 'b')).toEqual(['x', 'y']);
    expect(again.kv.get('meta', 'k')).toBeUndefined();
    await again.close();
  });

  it('writeBatch has encoded its values when it returns: the caller may reuse a buffer before the write is durable', async () => {
    const store = await openTestStore();
    const buffer = Buffer.alloc(200_000, 1); // large enough for LMDB's overflow pages, as a telemetry segment is
    const written = store.kv.writeBatch([{ table: 'telemetry', key: 'seg', value: { body: buffer.subarray(0, 150_000) } }]);
    buffer.fill(2);
    await written;
    const body = store.kv.get<{ body: Uint8Array }>('telemetry', 'seg')!.body;
    expect(body.length).toBe(150_000);
    expect(body.every((b) => b === 1)).toBe(true);
    await store.close();
  });
});

describe('encoding', () => {
  it('reads values written with msgpack records (the encoding before plain maps)', async () => {
    const path = tempDir();
    const value = { id: 'e1', at: 1, data: { nested: [{ a: 1 }, { a: 2, b: 'x' }], list: ['p', 'q'] }, flag: true, missing: null };
    const raw = open({ path, maxDbs: 32 });
    const db = raw.openDB({ name: 'telemetry', encoding: 'msgpack', useRecords: true } as { name: string; encoding: 'msgpack' });
    await db.put('old', value);
    await raw.close();
    const store = await openTestStore(path);
    expect(store.kv.get('telemetry', 'old')).toEqual(value);
    await store.kv.direct.put('telemetry', 'new', value);
    expect(store.kv.get('telemetry', 'new')).toEqual(value);
    await store.close();
    // The two really are different encodings of the same value.
    const check = open({ path, maxDbs: 32 });
    const bytes = check.openDB({ name: 'telemetry', encoding: 'binary' });
    expect(Buffer.compare(bytes.getBinary('old') as Buffer, bytes.getBinary('new') as Buffer)).not.toBe(0);
    await check.close();
  });
});

describe('closing', () => {
  it('reads after close() began fail with a clear error instead of reaching LMDB; no timer throws after close', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => void uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    try {
      for (let i = 0; i < 5; i++) {
        const kv = openKv({ path: tempDir(), diskReserveMb: TEST_DISK_RESERVE_MB });
        await kv.direct.put('meta', 'k', 1);
        expect(kv.get('meta', 'k')).toBe(1); // lmdb-js schedules a reset of its shared read transaction
        const closing = kv.close();
        expect(() => kv.get('meta', 'k')).toThrow('the store is closed');
        expect(() => [...kv.range('meta')]).toThrow('the store is closed');
        await expect(kv.direct.put('meta', 'k', 2)).rejects.toThrow('the store is closed');
        await closing;
      }
      // The same through a whole store's repositories once it is closed.
      const store = await openTestStore();
      await store.customers.save(customer('c1', 'ext-1'));
      expect(await store.customers.get('c1')).toBeDefined();
      await store.close();
      await expect(store.customers.get('c1')).rejects.toThrow('the store is closed');
      await new Promise((r) => setTimeout(r, 50));
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});
