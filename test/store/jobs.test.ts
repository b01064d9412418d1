// Contract: JobStore (src/store/repos.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import type { DeadJob, Job } from '../../src/store/model.ts';
import type { NewJob, Store } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';

/** Until `ok` holds (generous: a commit takes long on a busy machine); the assertion that follows says what failed. */
async function until(ok: () => boolean, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
}
import { engines } from './engines.ts';

const newJob = (id: string, extra: Partial<NewJob<unknown>> = {}): NewJob<unknown> =>
  Object.assign({ id, key: `key-${id}`, payload: { id, body: ['x', 1, null] }, attempts: 0, runAt: 100, enqueuedAt: 100 }, extra);

const dead = (job: Job<unknown>, failedAt: number): DeadJob<unknown> => Object.assign({}, job, { attempts: job.attempts + 1, failedAt, error: 'boom' });

const lease = (token: string, now = 100, o: { leaseMs?: number; limit?: number } = {}) => ({ now, leaseMs: o.leaseMs ?? 1000, limit: o.limit ?? 100, token });
const idsOf = (jobs: Job<unknown>[]) => jobs.map((j) => j.id);

export function describeJobsContract(engine: string, open: () => Promise<Store>, sibling: (first: Store) => Promise<Store>) {
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

    describe('claims', () => {
      it('a claim leases the due head of each key, in sequence order, up to its limit; leased heads and the jobs behind them are not claimed again', async () => {
        await insert('q', 'a1', { key: 'a' });
        await insert('q', 'a2', { key: 'a' });
        await insert('q', 'b1', { key: 'b' });
        await insert('q', 'c1', { key: 'c', runAt: 500 });
        await insert('q', 'd1', { key: 'd' });
        await insert('q', 'e1', { key: 'e' });
        await insert('other', 'x1', { key: 'a' });
        const first = await store().jobs.claim('q', lease('t1', 100, { limit: 3 }));
        expect(idsOf(first)).toEqual(['a1', 'b1', 'd1']);
        expect(first[0]).toEqual(Object.assign({ seq: first[0].seq }, newJob('a1', { key: 'a' })));
        expect(idsOf(await store().jobs.claim('q', lease('t2', 100)))).toEqual(['e1']);
        expect(await store().jobs.claim('q', lease('t3', 499))).toEqual([]); // c1 not due; a2 waits for a1
        expect(idsOf(await store().jobs.claim('q', lease('t3', 500)))).toEqual(['c1']);
        expect(idsOf(await store().jobs.claim('other', lease('t4', 100)))).toEqual(['x1']); // queues are separate
      });

      it('a key’s next job waits for its head: through a retry with a later runAt, until the head is finished', async () => {
        const a1 = await insert('q', 'a1', { key: 'a' });
        await insert('q', 'a2', { key: 'a' });
        expect(idsOf(await store().jobs.claim('q', lease('t1')))).toEqual(['a1']);
        // A retry gives the lease back and moves runAt: the key is held until then.
        expect(await store().jobs.update('q', Object.assign({}, a1, { attempts: 1, runAt: 300, lastError: 'later' }), { token: 't1' })).toBe(true);
        expect(await store().jobs.claim('q', lease('t2', 299))).toEqual([]);
        const again = await store().jobs.claim('q', lease('t2', 300));
        expect(again).toEqual([Object.assign({}, a1, { attempts: 1, runAt: 300, lastError: 'later' })]);
        expect(await store().jobs.claim('q', lease('t3', 300))).toEqual([]);
        expect(await store().jobs.finish('q', again[0], { keepId: false, at: 300, token: 't2' })).toBe(true);
        expect(idsOf(await store().jobs.claim('q', lease('t3', 300)))).toEqual(['a2']);
      });

      it('an expired lease is claimed again; the old token then writes nothing (finish, update, bury), the new one does', async () => {
        const a = await insert('q', 'a');
        expect(idsOf(await store().jobs.claim('q', lease('old', 100, { leaseMs: 1000 })))).toEqual(['a']);
        expect(await store().jobs.claim('q', lease('new', 1099))).toEqual([]);
        expect(idsOf(await store().jobs.claim('q', lease('new', 1100)))).toEqual(['a']);
        expect(await store().jobs.finish('q', a, { keepId: true, at: 1200, token: 'old' })).toBe(false);
        expect(await store().jobs.update('q', Object.assign({}, a, { attempts: 5, runAt: 9999 }), { token: 'old' })).toBe(false);
        expect(await store().jobs.bury('q', dead(a, 1200), { keepId: true, token: 'old' })).toBe(false);
        expect(await store().jobs.get('q', a.seq)).toEqual(a);
        expect(await store().jobs.deadLetters('q', 10)).toEqual([]);
        expect(await store().jobs.knows('q', 'a')).toBe(true);
        // The new claimer still holds it: nobody else gets it, and its finish is recorded.
        expect(await store().jobs.claim('q', lease('third', 1500))).toEqual([]);
        expect(await store().jobs.finish('q', a, { keepId: false, at: 1200, token: 'new' })).toBe(true);
        expect(await store().jobs.pending('q')).toEqual([]);
        expect(await store().jobs.knows('q', 'a')).toBe(false);
        expect(await store().jobs.finish('q', a, { keepId: false, at: 1200, token: 'new' })).toBe(false); // gone
      });

      it('dead letters and tombstones through claims are as without them', async () => {
        const a = await insert('q', 'a');
        const b = await insert('q', 'b');
        await store().jobs.claim('q', lease('t'));
        expect(await store().jobs.bury('q', dead(a, 300), { keepId: true, token: 't' })).toBe(true);
        expect(await store().jobs.finish('q', b, { keepId: true, at: 350, token: 't' })).toBe(true);
        expect(await store().jobs.deadLetters('q', 10)).toEqual([dead(a, 300)]);
        expect(await store().jobs.pending('q')).toEqual([]);
        expect(await store().jobs.insert('q', newJob('a'))).toBeUndefined();
        expect(await store().jobs.insert('q', newJob('b'))).toBeUndefined();
        expect(await store().jobs.prune('q', 400)).toBe(3);
        expect(await store().jobs.insert('q', newJob('b'))).toBeDefined();
      });

      it('outlook: how many are stored, and the next time a key’s head becomes claimable (its runAt or its lease’s end)', async () => {
        expect(await store().jobs.outlook('q', 100)).toEqual({ queued: 0 });
        await insert('q', 'a1', { key: 'a' });
        await insert('q', 'a2', { key: 'a', runAt: 150 }); // behind a1: not a head
        await insert('q', 'b1', { key: 'b', runAt: 700 });
        expect(await store().jobs.outlook('q', 100)).toEqual({ queued: 3, nextAt: 700 });
        await store().jobs.claim('q', lease('t', 100, { leaseMs: 400 })); // a1 leased until 500
        expect(await store().jobs.outlook('q', 100)).toEqual({ queued: 3, nextAt: 500 });
        expect(await store().jobs.outlook('q', 600)).toEqual({ queued: 3, nextAt: 700 });
        expect(await store().jobs.outlook('q', 700)).toEqual({ queued: 3 });
        expect(await store().jobs.outlook('other', 100)).toEqual({ queued: 0 });
      });

      it('expedite makes every waiting job of the queue due now', async () => {
        await insert('q', 'a', { runAt: 5000 });
        await insert('q', 'b', { runAt: 50 });
        await insert('other', 'c', { runAt: 5000 });
        expect(await store().jobs.expedite('q', 100)).toBe(1);
        expect(idsOf(await store().jobs.claim('q', lease('t', 100)))).toEqual(['a', 'b']);
        expect(await store().jobs.claim('other', lease('t', 100))).toEqual([]);
      });

      it('a job stored while an earlier one of its key is uncommitted is not claimed before it', async () => {
        let commit!: () => void;
        const gate = new Promise<void>((resolve) => (commit = resolve));
        let earlier: Job<unknown> | undefined;
        const tx = store().transaction(async (t) => {
          earlier = await t.jobs.insert('q', newJob('earlier', { key: 'k' }));
          await gate;
        });
        try {
          await until(() => earlier !== undefined);
          const later = store().jobs.insert('q', newJob('later', { key: 'k' }));
          await new Promise((r) => setTimeout(r, 200));
          expect(await store().jobs.claim('q', lease('t1'))).toEqual([]);
          commit();
          await later;
        } finally {
          commit();
          await tx;
        }
        expect(idsOf(await store().jobs.claim('q', lease('t2')))).toEqual(['earlier']);
      });

      if (engine === 'postgres') {
        // LMDB's leases live in the memory of the one process that holds the store, so they end with it.
        it('the leases of a store whose sessions are gone (its process died) are over at once, whatever their end', async () => {
          const other = await sibling(store());
          await insert('q', 'held', { key: 'k' });
          expect((await other.jobs.claim('q', lease('dead', 3_600_000))).map((j) => j.id)).toEqual(['held']);
          // Alive: the lease holds, and its end is the next time the outlook names.
          expect(await store().jobs.claim('q', lease('live', 60_000))).toEqual([]);
          await other.close(); // every connection of that store ends, as a SIGKILLed process's would
          // The server lists a closed session until its backend has exited: a moment, well under the lease.
          let claimed: Job<unknown>[] = [];
          for (const end = Date.now() + 15_000; claimed.length === 0 && Date.now() < end;) {
            claimed = await store().jobs.claim('q', lease('live', 60_000));
            if (claimed.length === 0) await new Promise((r) => setTimeout(r, 20));
          }
          expect(idsOf(claimed)).toEqual(['held']);
        });
      }

      it('claimers on two stores of one database (one store for LMDB), all at once, never get the same job, and each key runs in order', async () => {
        const other = await sibling(store());
        try {
          const keys = 8;
          for (let i = 0; i < 40; i++) await insert('q', `j${i}`, { key: `k${i % keys}`, payload: i });
          const claimedBy = new Map<number, string>();
          const order = new Map<string, number[]>();
          for (let round = 0; claimedBy.size < 40 && round < 40; round++) {
            const claims = await concurrently(10, (i) => {
              const token = `r${round}-${i}`;
              const by = i % 2 ? other : store();
              return by.jobs.claim('q', lease(token, 100, { limit: 3 })).then((jobs) => jobs.map((job) => ({ job, token, by })));
            });
            const all = claims.flat();
            // Only heads: one job per key at a time.
            expect(new Set(all.map((c) => c.job.key)).size).toBe(all.length);
            for (const { job, token } of all) {
              expect(claimedBy.has(job.seq), `${job.id} claimed twice`).toBe(false);
              claimedBy.set(job.seq, token);
              order.set(job.key, (order.get(job.key) ?? []).concat(job.payload as number));
            }
            // Each by the store that claimed it: a lease is its holder's (on PostgreSQL the token names the store).
            await Promise.all(all.map(({ job, token, by }) => by.jobs.finish('q', job, { keepId: false, at: 200, token })));
          }
          expect(claimedBy.size).toBe(40);
          for (let k = 0; k < keys; k++) expect(order.get(`k${k}`)).toEqual([0, 1, 2, 3, 4].map((n) => n * keys + k));
        } finally {
          if (other !== store()) await other.close();
        }
      });
    });
  });
}

for (const e of engines) describeJobsContract(e.name, e.open, e.sibling);
