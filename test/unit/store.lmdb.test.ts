import { describe, expect, it } from 'vitest';
import { open } from 'lmdb';
import { migrate, openStore } from '../../src/store/lmdb.ts';
import { tempDir } from '../support/tmp.ts';

describe('LMDB store', () => {
  it('runs migrations in order once, and reports them in checks', async () => {
    const path = tempDir();
    const ran: number[] = [];
    const list = [
      { version: 2, description: 'b', up: () => void ran.push(2) },
      { version: 1, description: 'a', up: () => void ran.push(1) },
    ];
    const store = await openStore({ path, migrations: list });
    expect(ran).toEqual([1, 2]);
    expect(store.schemaVersion()).toBe(2);
    expect(store.checks()).toEqual({ database: 'ok', migrations: 'ok' });
    await migrate(store, list);
    expect(ran).toEqual([1, 2]);
    await store.close();
    const again = await openStore({ path, migrations: list });
    expect(ran).toEqual([1, 2]);
    await again.close();
  });

  it('refuses data written by a newer schema', async () => {
    const path = tempDir();
    const s = await openStore({ path, migrations: [{ version: 5, description: 'x', up: () => {} }] });
    await s.close();
    await expect(openStore({ path, migrations: [{ version: 1, description: 'x', up: () => {} }] })).rejects.toThrow(/newer than this build/);
  });

  it('transactions are atomic and serialised: concurrent increments are exact', async () => {
    const store = await openStore({ path: tempDir() });
    const t = store.table<number>('meta');
    await Promise.all(
      Array.from({ length: 200 }, () =>
        store.transaction(() => {
          t.putInTx('n', (t.get('n') ?? 0) + 1);
        }),
      ),
    );
    expect(t.get('n')).toBe(200);
    await store.close();
  });

  it('writes survive close and reopen; range scans are ordered', async () => {
    const path = tempDir();
    const store = await openStore({ path });
    const t = store.table<string>('messages');
    await Promise.all([t.put(['m', 'c', 2], 'two'), t.put(['m', 'c', 1], 'one'), t.put(['m', 'd', 1], 'other')]);
    await store.close();
    const again = await openStore({ path });
    const rows = [...again.table<string>('messages').range({ start: ['m', 'c'], end: ['m', 'c', Infinity] })].map((r) => r.value);
    expect(rows).toEqual(['one', 'two']);
    await again.close();
  });
});

describe('transactions', () => {
  it('a callback that throws writes nothing; reads inside see the transaction’s own writes', async () => {
    const store = await openStore({ path: tempDir() });
    const t = store.table<number>('meta');
    await expect(
      store.transaction(() => {
        t.putInTx('a', 1);
        expect(t.get('a')).toBe(1);
        t.removeInTx('a');
        expect(t.get('a')).toBeUndefined();
        t.putInTx('b', 2);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(t.get('b')).toBeUndefined();
    expect(() => t.putInTx('c', 3)).toThrow(/outside store.transaction/);
    await store.close();
  });
});

describe('insertIfAbsent and writeBatch', () => {
  it('inserts once per guard key, atomically across tables, under concurrency; the result is durable', async () => {
    const path = tempDir();
    const store = await openStore({ path });
    const jobs = store.table<unknown>('jobs');
    const seen = store.table<number>('webhookSeen');
    const attempts = Array.from({ length: 50 }, (_, i) =>
      store.insertIfAbsent({ table: 'jobs', key: ['id', 'x'] }, [
        { table: 'jobs', key: ['id', 'x'], value: i },
        { table: 'webhookSeen', key: `x-${i}`, value: i },
      ]),
    );
    const results = await Promise.all(attempts);
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect(jobs.get(['id', 'x'])).toBe(winner);
    // The losers wrote nothing, in either table.
    expect([...seen.range()].map((r) => r.key)).toEqual([`x-${winner}`]);
    expect(await store.insertIfAbsent({ table: 'jobs', key: ['id', 'y'] }, [{ table: 'jobs', key: ['id', 'y'], value: 1 }])).toBe(true);
    await store.close();
    const again = await openStore({ path });
    expect(again.table('jobs').get(['id', 'x'])).toBe(winner);
    expect(again.table('jobs').get(['id', 'y'])).toBe(1);
    await again.close();
  });

  it('writeBatch stores every write across tables; both refuse to run inside a transaction', async () => {
    const path = tempDir();
    const store = await openStore({ path });
    await store.writeBatch([
      { table: 'telemetry', key: 'a', value: { n: 1 } },
      { table: 'turnCalls', key: 'b', value: ['x', 'y'] },
    ]);
    await store.writeBatch([]);
    await expect(store.transaction(() => store.writeBatch([{ table: 'meta', key: 'k', value: 1 }]))).rejects.toThrow(/inside store.transaction/);
    await expect(store.transaction(() => store.insertIfAbsent({ table: 'meta', key: 'k' }, []))).rejects.toThrow(/inside store.transaction/);
    await store.close();
    const again = await openStore({ path });
    expect(again.table('telemetry').get('a')).toEqual({ n: 1 });
    expect(again.table('turnCalls').get('b')).toEqual(['x', 'y']);
    expect(again.table('meta').get('k')).toBeUndefined();
    await again.close();
  });

  it('writeBatch has encoded its values when it returns: the caller may reuse a buffer before the write is durable', async () => {
    const store = await openStore({ path: tempDir() });
    const buffer = Buffer.alloc(200_000, 1); // large enough for LMDB's overflow pages, as a telemetry segment is
    const written = store.writeBatch([{ table: 'telemetry', key: 'seg', value: { body: buffer.subarray(0, 150_000) } }]);
    buffer.fill(2);
    await written;
    const body = store.table<{ body: Uint8Array }>('telemetry').get('seg')!.body;
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
    const store = await openStore({ path });
    expect(store.table('telemetry').get('old')).toEqual(value);
    await store.table('telemetry').put('new', value);
    expect(store.table('telemetry').get('new')).toEqual(value);
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
        const store = await openStore({ path: tempDir() });
        const t = store.table<number>('meta');
        await t.put('k', 1);
        expect(t.get('k')).toBe(1); // lmdb-js schedules a reset of its shared read transaction
        const closing = store.close();
        expect(() => t.get('k')).toThrow('the store is closed');
        expect(() => [...t.range()]).toThrow('the store is closed');
        await closing;
      }
      await new Promise((r) => setTimeout(r, 50));
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});
