// Job notices on PostgreSQL go out after the write they announce has committed, in a statement of their own
// (src/store/postgres/notices.ts): never from inside a write transaction, where NOTIFY serializes every commit of
// the database cluster behind one lock held through each commit's flush.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { createLogger } from '../../src/logger.ts';
import { JOBS_CHANNEL } from '../../src/store/postgres/jobs.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import type { NewJob, Store } from '../../src/store/repos.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';

const job = (id: string): NewJob<{ id: string }> => ({ id, key: id, payload: { id }, attempts: 0, runAt: Date.now(), enqueuedAt: Date.now() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A notice may take long on a busy machine: wait for it generously. */
const DEADLINE = { timeout: 15_000 };

describe('job notices on PostgreSQL', () => {
  let store: Store;
  let listener: pg.Client;
  const heard: string[] = [];

  beforeAll(async () => {
    const url = await createTestDatabase();
    store = await openPostgresStore({ url, logger: createLogger('silent') });
    listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (n) => {
      if (n.channel === JOBS_CHANNEL) heard.push(n.payload ?? '');
    });
    await listener.query(`LISTEN ${JOBS_CHANNEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await store?.close();
  });

  it('a job stored in a transaction is announced once, after COMMIT; one whose transaction rolls back never', async () => {
    heard.length = 0;
    const seq = await store.transaction(async (tx) => {
      const stored = await tx.jobs.insert('notices', job('in-tx'));
      await sleep(300); // still inside: nothing may be heard yet
      expect(heard).toEqual([]);
      return stored!.seq;
    });
    await expect.poll(() => heard, DEADLINE).toEqual([`${seq}:notices`]);

    heard.length = 0;
    await expect(
      store.transaction(async (tx) => {
        await tx.jobs.insert('notices', job('rolled-back'));
        throw new Error('changed its mind');
      }),
    ).rejects.toThrow('changed its mind');
    // A job stored after it is heard after anything the rolled-back write could have sent: wait for that one.
    const witness = (await store.jobs.insert('notices', job('witness')))!;
    await expect.poll(() => heard, DEADLINE).toContain(`${witness.seq}:notices`);
    expect(heard).toEqual([`${witness.seq}:notices`]);
    expect(await store.jobs.knows('notices', 'rolled-back')).toBe(false);
  });

  it('jobs stored on the pool at once are each announced, in notices sent together', async () => {
    heard.length = 0;
    const jobs = await Promise.all(Array.from({ length: 20 }, (_, i) => store.jobs.insert('burst', job(`burst-${i}`))));
    const expected = jobs.map((j) => `${j!.seq}:burst`).sort();
    await expect.poll(() => [...heard].sort(), DEADLINE).toEqual(expected);
  });

  it('a finish that leaves a next job for its key announces that job', async () => {
    const first = (await store.jobs.insert('chain', Object.assign(job('chain-1'), { key: 'k' })))!;
    const second = (await store.jobs.insert('chain', Object.assign(job('chain-2'), { key: 'k' })))!;
    const [claimed] = await store.jobs.claim('chain', { now: Date.now(), leaseMs: 10_000, limit: 10, token: 't' });
    expect(claimed.seq).toBe(first.seq);
    // Both inserts are announced; once they are heard, what follows is the finish's.
    await expect.poll(() => heard, DEADLINE).toEqual(expect.arrayContaining([`${first.seq}:chain`, `${second.seq}:chain`]));
    heard.length = 0;
    expect(await store.jobs.finish('chain', claimed, { keepId: false, at: Date.now(), token: 't' })).toBe(true);
    await expect.poll(() => heard, DEADLINE).toEqual([`${second.seq}:chain`]);
  });

  it('no statement of the engine NOTIFYs inside a write, except the bus’s large payloads (stored and announced together)', () => {
    const dir = join(PROJECT_ROOT, 'src/store/postgres');
    const notifying = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        readFileSync(join(dir, f), 'utf8')
          .split(/\n(?=const |export const )/)
          .filter((chunk) => chunk.includes('pg_notify('))
          .map((chunk) => `${f}:${/^(?:export )?const (\w+)/.exec(chunk)?.[1] ?? '?'}`),
      );
    // notices.ts and the bus's plain notice: a statement that writes nothing, committed without waiting for a flush.
    expect(notifying.sort()).toEqual(['bus.ts:NOTIFY', 'bus.ts:NOTIFY_STORED', 'notices.ts:NOTIFY_ALL']);
  });
});
