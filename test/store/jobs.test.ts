// Contract: JobStore (src/store/repos.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import type { DeadJob, Job } from '../../src/store/model.ts';
import type { NewJob, Store } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines } from './engines.ts';

const newJob = (id: string, extra: Partial<NewJob<unknown>> = {}): NewJob<unknown> =>
  Object.assign({ id, key: `key-${id}`, payload: { id, body: ['x', 1, null] }, attempts: 0, runAt: 100, enqueuedAt: 100 }, extra);

const dead = (job: Job<unknown>, failedAt: number): DeadJob<unknown> => Object.assign({}, job, { attempts: job.attempts + 1, failedAt, error: 'boom' });

export function describeJobsContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: jobs`, () => {
    const store = freshStore(open);
    const insert = async (queue: string, id: string, extra?: Partial<NewJob<unknown>>) => {
      const job = await store().jobs.insert(queue, newJob(id, extra));
      if (!job) throw new Error(`${id} refused`);
      return job;
    };

    it('insert gives the job a sequence number; get and pending return it whole, pending in sequence order', async () => {
      const a = await insert('q', 'a', { lastError: 'earlier', attempts: 2 });
      const b = await insert('q', 'b');
      expect(a).toEqual(Object.assign({ seq: a.seq }, newJob('a', { lastError: 'earlier', attempts: 2 })));
      expect(b.seq).toBeGreaterThan(a.seq);
      expect(await store().jobs.get('q', a.seq)).toEqual(a);
      expect(await store().jobs.get('q', 999_999)).toBeUndefined();
      expect(await store().jobs.get('other', a.seq)).toBeUndefined();
      expect(await store().jobs.pending('q')).toEqual([a, b]);
      expect(await store().jobs.pending('other')).toEqual([]);
    });

    it('an id already queued is refused; queues are separate', async () => {
      await insert('q', 'a');
      expect(await store().jobs.insert('q', newJob('a', { payload: 'second' }))).toBeUndefined();
      expect(await store().jobs.pending('q')).toHaveLength(1);
      expect(await store().jobs.knows('q', 'a')).toBe(true);
      expect(await store().jobs.knows('q', 'b')).toBe(false);
      expect(await store().jobs.insert('other', newJob('a'))).toBeDefined();
    });

    it('concurrent inserts of one id store it once', async () => {
      await warmUp(store());
      const results = await concurrently(20, (i) => store().jobs.insert('q', newJob('same', { payload: i })));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      expect(await store().jobs.pending('q')).toHaveLength(1);
    });

    it('sequence numbers keep increasing and are never handed out again, not even after jobs finish', async () => {
      const seqs: number[] = [];
      for (let i = 0; i < 5; i++) {
        const j = await insert('q', `j${i}`);
        seqs.push(j.seq);
        await store().jobs.finish('q', j, { keepId: false, at: 200 });
      }
      expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(5);
    });

    it('update writes attempts, runAt and lastError (and clears lastError)', async () => {
      const a = await insert('q', 'a');
      const retried = Object.assign({}, a, { attempts: 1, runAt: 500, lastError: 'timeout' });
      await store().jobs.update('q', retried);
      expect(await store().jobs.get('q', a.seq)).toEqual(retried);
      const waited = Object.assign({}, a, { attempts: 1, runAt: 900 });
      await store().jobs.update('q', waited);
      expect(await store().jobs.get('q', a.seq)).toEqual(waited);
    });

    it('finish without keepId forgets the id: the same id can be queued again', async () => {
      const a = await insert('q', 'a');
      await store().jobs.finish('q', a, { keepId: false, at: 200 });
      expect(await store().jobs.get('q', a.seq)).toBeUndefined();
      expect(await store().jobs.knows('q', 'a')).toBe(false);
      const again = await store().jobs.insert('q', newJob('a'));
      expect(again?.seq).toBeGreaterThan(a.seq);
    });

    it('finish with keepId keeps the id known (refused) until prune passes its time', async () => {
      const a = await insert('q', 'a');
      await store().jobs.finish('q', a, { keepId: true, at: 200 });
      expect(await store().jobs.pending('q')).toEqual([]);
      expect(await store().jobs.knows('q', 'a')).toBe(true);
      expect(await store().jobs.insert('q', newJob('a'))).toBeUndefined();
      expect(await store().jobs.prune('q', 200)).toBe(0); // finished at 200: not before 200
      expect(await store().jobs.prune('other', 1000)).toBe(0);
      expect(await store().jobs.knows('q', 'a')).toBe(true);
      expect(await store().jobs.prune('q', 201)).toBe(1);
      expect(await store().jobs.knows('q', 'a')).toBe(false);
      expect(await store().jobs.insert('q', newJob('a'))).toBeDefined();
    });

    it('prune never forgets the id of a job still queued', async () => {
      await insert('q', 'a');
      expect(await store().jobs.prune('q', Number.MAX_SAFE_INTEGER)).toBe(0);
      expect(await store().jobs.knows('q', 'a')).toBe(true);
      expect(await store().jobs.pending('q')).toHaveLength(1);
    });

    it('bury moves a job to the dead letters (listed in sequence order, limited); keepId decides whether its id stays known', async () => {
      const a = await insert('q', 'a');
      const b = await insert('q', 'b');
      const c = await insert('q', 'c');
      await store().jobs.bury('q', dead(b, 300), { keepId: true });
      await store().jobs.bury('q', dead(a, 400), { keepId: false });
      expect(await store().jobs.pending('q')).toEqual([c]);
      expect(await store().jobs.deadLetters('q', 10)).toEqual([dead(a, 400), dead(b, 300)]);
      expect(await store().jobs.deadLetters('q', 1)).toEqual([dead(a, 400)]);
      expect(await store().jobs.deadLetters('other', 10)).toEqual([]);
      expect(await store().jobs.knows('q', 'a')).toBe(false);
      expect(await store().jobs.knows('q', 'b')).toBe(true);
      expect(await store().jobs.insert('q', newJob('b'))).toBeUndefined();
    });

    it('prune forgets dead letters that failed before its time, with the kept ids, and counts both', async () => {
      const a = await insert('q', 'a');
      const b = await insert('q', 'b');
      const c = await insert('q', 'c');
      await store().jobs.bury('q', dead(a, 300), { keepId: true }); // a dead letter and a kept id, both from 300
      await store().jobs.bury('q', dead(b, 500), { keepId: false });
      await store().jobs.finish('q', c, { keepId: true, at: 350 });
      expect(await store().jobs.prune('q', 400)).toBe(3);
      expect(await store().jobs.deadLetters('q', 10)).toEqual([dead(b, 500)]);
      expect(await store().jobs.knows('q', 'a')).toBe(false);
      expect(await store().jobs.knows('q', 'c')).toBe(false);
    });
  });
}

for (const e of engines) describeJobsContract(e.name, e.open);
