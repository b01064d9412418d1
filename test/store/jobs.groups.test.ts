// Contract: the JobStore operations webhook delivery needs (issue 34): claims that pass over groups of jobs by key
// prefix (an endpoint at its concurrency or with its circuit open), and the queue's totals, on every engine.
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/store/model.ts';
import type { NewJob, Store } from '../../src/store/repos.ts';
import { freshStore } from './contract.ts';
import { engines } from './engines.ts';

const newJob = (id: string, key: string): NewJob<unknown> => ({ id, key, payload: { id }, attempts: 0, runAt: 100, enqueuedAt: 100 });
const claim = (token: string, o: { limit?: number; skip?: string[] } = {}) =>
  Object.assign({ now: 100, leaseMs: 1000, limit: o.limit ?? 100, token }, o.skip ? { skipKeyPrefixes: o.skip } : {});
const idsOf = (jobs: Job<unknown>[]) => jobs.map((j) => j.id);

export function describeJobGroupsContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: jobs, groups and totals`, () => {
    const store = freshStore(open);
    const insert = async (id: string, key: string) => {
      const job = await store().jobs.insert('q', newJob(id, key));
      if (!job) throw new Error(`${id} refused`);
      return job;
    };

    it('a claim passes over jobs whose key starts with a skipped prefix, and they do not use up its limit', async () => {
      for (let i = 0; i < 4; i++) await insert(`slow-${i}`, `slow/${i}`);
      for (let i = 0; i < 3; i++) await insert(`ok-${i}`, `ok/${i}`);
      // The slow group's jobs come first in sequence order: with a limit of 2 they would be all a claim gets.
      expect(idsOf(await store().jobs.claim('q', claim('t1', { limit: 2, skip: ['slow/'] })))).toEqual(['ok-0', 'ok-1']);
      expect(idsOf(await store().jobs.claim('q', claim('t2', { skip: ['slow/', 'nothing/'] })))).toEqual(['ok-2']);
      // Without the prefix they are claimable as before; an empty list skips nothing.
      expect(idsOf(await store().jobs.claim('q', claim('t3', { limit: 3, skip: [] })))).toEqual(['slow-0', 'slow-1', 'slow-2']);
      expect(idsOf(await store().jobs.claim('q', claim('t4')))).toEqual(['slow-3']);
    });

    it('a prefix is matched literally from the start of the key (not as a pattern, not anywhere inside it)', async () => {
      await insert('a', 'ab%/1');
      await insert('b', 'abc/1');
      await insert('c', 'x/ab%/1');
      expect(idsOf(await store().jobs.claim('q', claim('t', { skip: ['ab%'] })))).toEqual(['b', 'c']);
    });

    it('counts are the queue’s totals: queued jobs, dead letters and kept ids, whatever a page shows; prune lowers them', async () => {
      const jobs: Job<unknown>[] = [];
      for (let i = 0; i < 7; i++) jobs.push(await insert(`j${i}`, `k/${i}`));
      await store().jobs.insert('other', newJob('elsewhere', 'k/x'));
      for (const j of jobs.slice(0, 3)) await store().jobs.bury('q', Object.assign({}, j, { failedAt: 200 + j.seq, error: 'boom' }), { keepId: true });
      for (const j of jobs.slice(3, 5)) await store().jobs.finish('q', j, { keepId: true, at: 300 });
      await store().jobs.finish('q', jobs[5], { keepId: false, at: 300 });
      expect(await store().jobs.deadLetters('q', 2)).toHaveLength(2);
      expect(await store().jobs.counts('q')).toEqual({ queued: 1, dead: 3, keptIds: 5 });
      expect(await store().jobs.counts('other')).toEqual({ queued: 1, dead: 0, keptIds: 0 });
      expect(await store().jobs.counts('none')).toEqual({ queued: 0, dead: 0, keptIds: 0 });
      await store().jobs.prune('q', 10_000);
      expect(await store().jobs.counts('q')).toEqual({ queued: 1, dead: 0, keptIds: 0 });
    });
  });
}

for (const e of engines) describeJobGroupsContract(e.name, e.open);
