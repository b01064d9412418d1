// The LMDB engine's job records (src/store/lmdb/repos/jobs.ts): the sequence reservation it writes with the jobs,
// and the schema-3 migration that moved WhatsApp de-dup records into the inbound queue's id index.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createJobQueue } from '../../src/jobs/queue.ts';
import { createLogger } from '../../src/logger.ts';
import { migrations } from '../../src/store/lmdb/migrations.ts';
import type { NewJob } from '../../src/store/repos.ts';
import { openTestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

const logger = createLogger('silent');
type P = { key: string; n: number };
const job = (id: string): NewJob<number> => ({ id, key: 'k', payload: 1, attempts: 0, runAt: 0, enqueuedAt: 0 });
const SEQ_BLOCK = 1 << 20;

describe('LMDB job records', () => {
  it('the first job of a block carries the block’s end in its own write; a restart starts past the stored end', async () => {
    const path = tempDir();
    const store = await openTestStore(path);
    const reservation = () => store.kv.get<number>('jobs', ['seq', 'q1']);
    expect(reservation()).toBeUndefined();
    const a = await store.jobs.insert('q1', job('a'));
    expect(a!.seq).toBe(1);
    expect(reservation()).toBe(1 + SEQ_BLOCK);
    expect(store.kv.get('jobs', ['q', 'q1', 1])).toMatchObject({ id: 'a', seq: 1 });
    expect(store.kv.get('jobs', ['id', 'q1', 'a'])).toBe(1);
    // Within the block nothing more is written for the reservation.
    const b = await store.jobs.insert('q1', job('b'));
    expect(b!.seq).toBe(2);
    expect(reservation()).toBe(1 + SEQ_BLOCK);
    // A job prepared in a transaction carries a reservation again (whether that transaction commits is not known
    // to the store), and one that is rolled back leaves none behind.
    await expect(
      store.transaction(async (tx) => {
        await tx.jobs.insert('q2', job('rolled-back'));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(store.kv.get('jobs', ['seq', 'q2'])).toBeUndefined();
    const c = await store.transaction((tx) => tx.jobs.insert('q2', job('c')));
    expect(store.kv.get('jobs', ['seq', 'q2'])).toBe(c!.seq + SEQ_BLOCK);
    await store.jobs.finish('q1', a!, { keepId: true, at: 5 });
    await store.jobs.finish('q1', b!, { keepId: false, at: 5 });
    expect(store.kv.get('jobs', ['q', 'q1', 1])).toBeUndefined();
    expect(store.kv.get('jobs', ['id', 'q1', 'a'])).toEqual({ doneAt: 5 });
    expect(store.kv.get('jobs', ['id', 'q1', 'b'])).toBeUndefined();
    await store.close();

    const again = await openTestStore(path);
    const d = await again.jobs.insert('q1', job('d'));
    expect(d!.seq).toBe(1 + SEQ_BLOCK + 1);
    expect(again.kv.get('jobs', ['seq', 'q1'])).toBe(d!.seq + SEQ_BLOCK);
    await again.close();
  });

  it('the schema-3 migration turns WhatsApp de-dup records kept in webhookSeen into the inbound queue’s id tombstones', async () => {
    const path = tempDir();
    const old = await openTestStore(path, { migrations: migrations.filter((m) => m.version <= 2) });
    await old.kv.transaction(async (tx) => {
      await tx.put('webhookSeen', 'wa:wamid.old', 123);
      await tx.put('webhookSeen', 'handled:wa:wamid.confirmed', 456);
    });
    await old.close();
    const store = await openTestStore(path);
    const clock = createManualClock(1_000_000);
    const q = createJobQueue<P>({ store, clock, name: 'wa-inbound', logger, handler: async () => 'done', orderingKey: (p) => p.key, keepDoneIds: true });
    expect(await q.knows('wa:wamid.old')).toBe(true);
    expect(await q.enqueue({ key: 'a', n: 1 }, { id: 'wa:wamid.old' })).toBe(false);
    expect(store.kv.get('webhookSeen', 'wa:wamid.old')).toBeUndefined();
    // Records of confirmations stay where the channel reads them.
    expect(store.kv.get('webhookSeen', 'handled:wa:wamid.confirmed')).toBe(456);
    expect(await store.whatsapp.handled('wamid.confirmed')).toBe(true);
    // The tombstone keeps its time, so retention prunes it like any other.
    expect(await q.prune(124)).toBe(1);
    expect(await q.knows('wa:wamid.old')).toBe(false);
    await store.close();
  });
});
