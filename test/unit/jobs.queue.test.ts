import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createJobQueue, type Job, type JobOutcome } from '../../src/jobs/queue.ts';
import { createLogger } from '../../src/logger.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import type { NewJob, Store } from '../../src/store/repos.ts';
import { openTestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

const logger = createLogger('silent');
const tick = () => new Promise((r) => setTimeout(r, 10));
/** Waits for what a clock step should cause (commits take longer on a loaded machine than one tick): generously. */
async function until(ok: () => boolean, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  while (!ok() && Date.now() < end) await tick();
}
type P = { key: string; n: number };

async function setup(o: {
  path?: string;
  handler: (job: Job<P>) => Promise<JobOutcome>;
  maxAttempts?: number;
  leaseMs?: number;
  concurrency?: number;
  keepDoneIds?: boolean;
}) {
  const path = o.path ?? tempDir();
  const store = await openTestStore(path);
  const clock = createManualClock(1_000_000);
  const dead: Job<P>[] = [];
  const q = createJobQueue<P>({
    store,
    clock,
    name: 'test',
    logger,
    handler: o.handler,
    orderingKey: (p) => p.key,
    maxAttempts: o.maxAttempts ?? 3,
    leaseMs: o.leaseMs ?? 10_000,
    concurrency: o.concurrency ?? 4,
    keepDoneIds: o.keepDoneIds,
    onDeadLetter: (j) => dead.push(j),
  });
  return { q, store, clock, path, dead };
}

describe('durable job queue', () => {
  it('runs one job per key at a time, in enqueue order; keys run in parallel', async () => {
    const log: string[] = [];
    let active = 0;
    let maxActive = 0;
    const { q } = await setup({
      handler: async (job) => {
        active++;
        maxActive = Math.max(maxActive, active);
        log.push(`${job.payload.key}${job.payload.n}`);
        await tick();
        active--;
        return 'done';
      },
    });
    await q.start();
    for (let n = 1; n <= 3; n++) for (const key of ['a', 'b']) await q.enqueue({ key, n });
    await q.idle();
    expect(log.filter((x) => x.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
    expect(log.filter((x) => x.startsWith('b'))).toEqual(['b1', 'b2', 'b3']);
    expect(maxActive).toBe(2);
  });

  it('an id makes enqueue idempotent while the job exists', async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { q } = await setup({ handler: async () => (runs++, await gate, 'done') });
    await q.start();
    expect(await q.enqueue({ key: 'a', n: 1 }, { id: 'x' })).toBe(true);
    expect(await q.enqueue({ key: 'a', n: 1 }, { id: 'x' })).toBe(false);
    release();
    await q.idle();
    expect(runs).toBe(1);
  });

  it('enqueueAll: concurrent calls with overlapping ids store each id once; each call’s jobs are numbered in the order given', async () => {
    const ran: number[] = [];
    const { q, store } = await setup({ handler: async (job) => (ran.push(job.payload.n), 'done') });
    const batch = (ns: number[]) => q.enqueueAll(ns.map((n) => ({ payload: { key: 'k', n }, options: { id: `id-${n}` } })));
    const [a, b] = await Promise.all([batch([1, 2, 3, 2]), batch([3, 4, 1])]);
    // Which call stores a shared id depends on timing; every id is stored by exactly one of them, and once.
    const returned = a.concat(b).filter((j) => j !== undefined);
    expect(returned.map((j) => j.payload.n).sort()).toEqual([1, 2, 3, 4]);
    expect(a[3]).toBeUndefined(); // the same id twice in one call
    for (const call of [a, b]) {
      const seqs = call.filter((j) => j !== undefined).map((j) => j.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
    expect(q.depth()).toBe(4);
    // Each id is stored once, with the job the call returned.
    const stored = await store.jobs.pending<P>('test');
    expect(stored.map((j) => [j.id, j.seq, j.payload.n])).toEqual(returned.sort((x, y) => x.seq - y.seq).map((j) => [j.id, j.seq, j.payload.n]));
    await q.start();
    await q.idle();
    expect(ran).toEqual(stored.map((j) => j.payload.n));
  });

  it('an insert whose answer was lost (it was stored all the same) is scheduled when the store recovers, also when it lands just after', async () => {
    // What PostgreSQL can do: the caller sees the store unavailable, and the job is stored now (`lost-now`) or a
    // moment later, when a stalled server resumes (`lost-late`). The retried enqueue finds its id known.
    const store = await openTestStore(tempDir());
    const late: (() => Promise<unknown>)[] = [];
    const toLose = new Set(['lost-now', 'lost-late']);
    const insert = async <Q>(queue: string, job: NewJob<Q>) => {
      if (!toLose.delete(job.id)) return store.jobs.insert<Q>(queue, job);
      if (job.id === 'lost-now') await store.jobs.insert<Q>(queue, job);
      else late.push(() => store.jobs.insert<Q>(queue, job));
      throw new StoreUnavailableError('unreachable', 'the connection broke after the COMMIT went out (test)');
    };
    const recovered = new Set<() => void>();
    const onRecovered = (l: () => void) => (recovered.add(l), () => recovered.delete(l));
    const lossy: Store = Object.assign({}, store, { jobs: Object.assign({}, store.jobs, { insert }), onRecovered });
    const clock = createManualClock(1_000_000);
    const ran: number[] = [];
    const q = createJobQueue<P>({
      store: lossy,
      clock,
      name: 'test',
      logger,
      handler: async (job) => (ran.push(job.payload.n), 'done'),
      orderingKey: (p) => p.key,
      keepDoneIds: true,
    });
    await q.start();
    await expect(q.enqueue({ key: 'a', n: 1 }, { id: 'lost-now' })).rejects.toThrow(StoreUnavailableError);
    await expect(q.enqueue({ key: 'b', n: 2 }, { id: 'lost-late' })).rejects.toThrow(StoreUnavailableError);
    expect(await q.enqueue({ key: 'a', n: 1 }, { id: 'lost-now' })).toBe(false); // Meta's retry: a known id
    // The worker claims from the store, so the stored one may already run; at the latest the recovery makes it look.
    for (const l of recovered) l();
    await until(() => ran.length === 1);
    expect(ran).toEqual([1]);
    await late.pop()!(); // the stalled commit lands after the store answered again
    clock.advance(5000);
    await until(() => ran.length === 2);
    await q.idle();
    expect(ran).toEqual([1, 2]);
    await q.stop();
  });

  it('enqueueAll: when one write fails, the jobs that were stored still run, and the call rejects', async () => {
    const path = tempDir();
    const store = await openTestStore(path);
    const insert = <Q>(queue: string, job: NewJob<Q>) =>
      job.id.includes('bad') ? Promise.reject(new Error('disk full (test)')) : store.jobs.insert<Q>(queue, job);
    const failing: Store = Object.assign({}, store, { jobs: Object.assign({}, store.jobs, { insert }) });
    const ran: number[] = [];
    const q = createJobQueue<P>({
      store: failing,
      clock: createManualClock(1_000_000),
      name: 'test',
      logger,
      handler: async (job) => (ran.push(job.payload.n), 'done'),
      orderingKey: (p) => p.key,
      keepDoneIds: true,
    });
    await q.start();
    const items = [
      { payload: { key: 'a', n: 1 }, options: { id: 'ok-1' } },
      { payload: { key: 'a', n: 2 }, options: { id: 'bad' } },
      { payload: { key: 'b', n: 3 }, options: { id: 'ok-3' } },
    ];
    await expect(q.enqueueAll(items)).rejects.toThrow('disk full (test)');
    await q.idle();
    expect(ran.sort()).toEqual([1, 3]);
    // A retried delivery finds the stored ones known: they are not queued twice.
    expect(await q.enqueue({ key: 'a', n: 1 }, { id: 'ok-1' })).toBe(false);
    // One item (the webhook's usual case) takes a shorter path with the same outcomes.
    await expect(q.enqueueAll([{ payload: { key: 'c', n: 4 }, options: { id: 'bad' } }])).rejects.toThrow('disk full (test)');
    expect((await q.enqueueAll([{ payload: { key: 'c', n: 5 }, options: { id: 'ok-5' } }])).map((j) => j?.payload.n)).toEqual([5]);
    expect(await q.enqueueAll([{ payload: { key: 'c', n: 5 }, options: { id: 'ok-5' } }])).toEqual([undefined]);
    await q.idle();
    expect(ran.sort()).toEqual([1, 3, 5]);
    await store.close();
  });

  it('retries at retryAt (clock-driven, not polling) and dead-letters after maxAttempts', async () => {
    const attempts: number[] = [];
    const { q, clock, dead } = await setup({
      maxAttempts: 3,
      handler: async (job) => (attempts.push(job.attempts), { retryAt: clock.now() + 5000, error: 'nope' }),
    });
    await q.start();
    await q.enqueue({ key: 'a', n: 1 });
    await until(() => attempts.length === 1 && q.inFlight() === 0);
    expect(attempts).toEqual([0]);
    clock.advance(4999);
    await tick();
    expect(attempts).toEqual([0]);
    clock.advance(1);
    await until(() => attempts.length === 2 && q.inFlight() === 0);
    expect(attempts).toEqual([0, 1]);
    clock.advance(5000);
    await until(() => dead.length === 1);
    expect(attempts).toEqual([0, 1, 2]);
    expect(dead).toHaveLength(1);
    expect(await q.deadLetters()).toEqual([expect.objectContaining({ error: 'nope', attempts: 3 })]);
    expect(q.depth()).toBe(0);
  });

  it('a job waiting for a retry holds back later jobs of the same key only', async () => {
    const log: string[] = [];
    let first = true;
    const { q, clock } = await setup({
      handler: async (job) => {
        log.push(`${job.payload.key}${job.payload.n}`);
        if (job.payload.key === 'a' && job.payload.n === 1 && first) {
          first = false;
          return { retryAt: clock.now() + 1000 };
        }
        return 'done';
      },
    });
    await q.start();
    await q.enqueue({ key: 'a', n: 1 });
    await q.enqueue({ key: 'a', n: 2 });
    await q.enqueue({ key: 'b', n: 1 });
    await until(() => log.length >= 2 && q.inFlight() === 0);
    expect(log).toEqual(['a1', 'b1']);
    clock.advance(1000);
    await q.idle();
    expect(log).toEqual(['a1', 'b1', 'a1', 'a2']);
  });

  it('fail → dead letter at once, no retry', async () => {
    let runs = 0;
    const { q } = await setup({ handler: async () => (runs++, { fail: '400: bad number' }) });
    await q.start();
    await q.enqueue({ key: 'a', n: 1 });
    await q.idle();
    expect(runs).toBe(1);
    expect((await q.deadLetters())[0].error).toBe('400: bad number');
  });

  it('a hung handler loses its lease and the job runs again', async () => {
    let runs = 0;
    const { q, clock } = await setup({ leaseMs: 3000, handler: async () => (++runs === 1 ? new Promise<JobOutcome>(() => {}) : 'done') });
    await q.start();
    await q.enqueue({ key: 'a', n: 1 });
    await until(() => runs >= 1);
    expect(runs).toBe(1);
    clock.advance(3000);
    await q.idle();
    expect(runs).toBe(2);
  });

  it('a run whose lease ended records nothing when it settles late: the job is its new run’s', async () => {
    const release: ((o: JobOutcome) => void)[] = [];
    const { q, clock, store } = await setup({ leaseMs: 3000, handler: () => new Promise<JobOutcome>((r) => release.push(r)) });
    await q.start();
    await q.enqueue({ key: 'a', n: 1 }, { id: 'slow' });
    await until(() => release.length === 1);
    clock.advance(3000); // the first run loses its lease; the job goes back (an attempt counted) and runs again
    await until(() => release.length === 2);
    release[0]('done');
    await tick();
    await tick();
    expect((await store.jobs.pending<P>('test')).map((j) => [j.id, j.attempts])).toEqual([['slow', 1]]);
    expect(q.inFlight()).toBe(1);
    release[1]('done');
    await q.idle();
    expect(await store.jobs.pending('test')).toEqual([]);
  });

  it('jobs survive a restart: a new queue on the same store runs what was left', async () => {
    const path = tempDir();
    const first = await setup({ path, handler: () => new Promise<JobOutcome>(() => {}) });
    await first.q.start();
    await first.q.enqueue({ key: 'a', n: 1 });
    await first.q.enqueue({ key: 'a', n: 2 });
    await first.store.close(); // "crash": the handler never finished
    const ran: number[] = [];
    const second = await setup({ path, handler: async (job) => (ran.push(job.payload.n), 'done') });
    await second.q.start();
    await second.q.idle();
    expect(ran).toEqual([1, 2]);
    await second.store.close();
    const third = await setup({ path, handler: async () => 'done' });
    await third.q.start();
    expect(third.q.depth()).toBe(0);
  });

  it('jobs prepared inside a caller transaction run only after accept', async () => {
    const ran: number[] = [];
    const { q, store } = await setup({ handler: async (job) => (ran.push(job.payload.n), 'done') });
    await q.start();
    const jobs = await store.transaction(async (tx) => [
      await q.prepare(tx, { key: 'a', n: 1 }, { id: 'one' }),
      await q.prepare(tx, { key: 'a', n: 2 }, { id: 'one' }),
    ]);
    expect(jobs[1]).toBeUndefined();
    await tick();
    expect(ran).toEqual([]);
    q.accept(jobs);
    await q.idle();
    expect(ran).toEqual([1]);
  });

  it('waitUntil uses no attempts; expedite ends the wait at once', async () => {
    let ready = false;
    const runs: number[] = [];
    const { q, clock, dead } = await setup({
      maxAttempts: 1,
      handler: async (job) => (runs.push(job.attempts), ready ? 'done' : { waitUntil: clock.now() + 60_000, reason: 'no sender' }),
    });
    await q.start();
    await q.enqueue({ key: 'a', n: 1 });
    await until(() => runs.length === 1 && q.inFlight() === 0);
    clock.advance(60_000);
    await until(() => runs.length === 2);
    expect(runs).toEqual([0, 0]);
    ready = true;
    q.expedite();
    await q.idle();
    expect(runs).toEqual([0, 0, 0]);
    expect(dead).toEqual([]);
  });

  it('expedite while a run is in flight: the wait that run then asks for is over at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runs: number[] = [];
    const { q, clock } = await setup({
      handler: async (job) => {
        runs.push(job.attempts);
        if (runs.length > 1) return 'done';
        await gate; // the sender comes back while this run still thinks it is away
        return { waitUntil: clock.now() + 60_000, reason: 'no sender' };
      },
    });
    await q.start();
    await q.enqueue({ key: 'a', n: 1 });
    await until(() => runs.length === 1);
    q.expedite();
    release();
    await until(() => runs.length === 2);
    expect(runs).toEqual([0, 0]);
    await q.idle();
  });

  it('keepDoneIds: a finished job’s id is refused until pruned; prune also drops old dead letters', async () => {
    const { q, clock } = await setup({ keepDoneIds: true, handler: async (job) => (job.payload.n === 2 ? { fail: 'bad' } : 'done') });
    await q.start();
    expect(await q.enqueue({ key: 'a', n: 1 }, { id: 'x' })).toBe(true);
    expect(await q.enqueue({ key: 'a', n: 2 }, { id: 'y' })).toBe(true);
    await q.idle();
    expect(await q.knows('x')).toBe(true);
    expect(await q.enqueue({ key: 'a', n: 1 }, { id: 'x' })).toBe(false);
    expect(await q.enqueue({ key: 'a', n: 2 }, { id: 'y' })).toBe(false);
    expect(await q.prune(clock.now() - 1)).toBe(0);
    clock.advance(10);
    expect(await q.prune(clock.now())).toBe(3); // two tombstones, one dead letter
    expect(await q.deadLetters()).toEqual([]);
    expect(await q.enqueue({ key: 'a', n: 1 }, { id: 'x' })).toBe(true);
  });

  it('sequence numbers continue after a restart (no stored counter): new jobs never overwrite stored or dead ones', async () => {
    const path = tempDir();
    const first = await setup({ path, maxAttempts: 1, handler: async (job) => (job.payload.n === 1 ? { fail: 'dead' } : new Promise<JobOutcome>(() => {})) });
    await first.q.start();
    await first.q.enqueue({ key: 'a', n: 1 });
    await first.q.idle();
    await first.q.enqueue({ key: 'b', n: 2 });
    await first.store.close();
    const ran: number[] = [];
    const second = await setup({ path, handler: async (job) => (ran.push(job.payload.n), 'done') });
    await second.q.enqueue({ key: 'c', n: 3 });
    await second.q.start();
    await second.q.idle();
    expect(ran).toEqual([2, 3]);
    expect((await second.q.deadLetters()).map((d) => d.payload.n)).toEqual([1]);
  });

  it('a finished job’s number is never handed out again after a restart, whether it was enqueued or prepared in a transaction', async () => {
    const path = tempDir();
    const first = await setup({ path, keepDoneIds: true, handler: async () => 'done' });
    await first.q.start();
    const enqueued = await first.q.enqueueAll([{ payload: { key: 'a', n: 1 } }, { payload: { key: 'a', n: 2 } }]);
    // A second queue whose jobs are only ever stored inside a caller's transaction.
    const inTx = createJobQueue<P>({ store: first.store, clock: first.clock, name: 'test-tx', logger, handler: async () => 'done', orderingKey: (p) => p.key });
    await inTx.start();
    const prepared = await first.store.transaction(async (tx) => [await inTx.prepare(tx, { key: 'a', n: 1 }), await inTx.prepare(tx, { key: 'a', n: 2 })]);
    inTx.accept(prepared);
    await Promise.all([first.q.idle(), inTx.idle()]);
    // Nothing of either queue is stored any more but the tombstones of `test`.
    expect(await first.store.jobs.pending('test')).toEqual([]);
    expect(await first.store.jobs.pending('test-tx')).toEqual([]);
    await first.store.close();

    const store = await openTestStore(path);
    for (const [queue, before] of [
      ['test', enqueued],
      ['test-tx', prepared],
    ] as const) {
      const handedOut = Math.max(...before.map((j) => j!.seq));
      const direct = await store.jobs.insert(queue, { id: `${queue}-after-1`, key: 'b', payload: 3, attempts: 0, runAt: 0, enqueuedAt: 0 });
      const viaTx = await store.transaction((tx) =>
        tx.jobs.insert(queue, { id: `${queue}-after-2`, key: 'b', payload: 4, attempts: 0, runAt: 0, enqueuedAt: 0 }),
      );
      expect(direct!.seq).toBeGreaterThan(handedOut);
      expect(viaTx!.seq).toBeGreaterThan(direct!.seq);
    }
    await store.close();
    // Default ids are unique without the sequence: a job with one is never refused as a duplicate of a finished one.
    const second = await setup({ path, keepDoneIds: true, handler: async () => 'done' });
    const again = await second.q.enqueueAll([{ payload: { key: 'b', n: 5 } }, { payload: { key: 'b', n: 6 } }]);
    expect(again.every((j) => j !== undefined)).toBe(true);
    expect(new Set([...enqueued, ...again].map((j) => j!.id)).size).toBe(4);
    await second.store.close();
  });

  it('a store that cannot write makes a job wait without spending attempts, however long it lasts; it runs once the store is back', async () => {
    let down = 6;
    const runs: number[] = [];
    const { q, clock, dead } = await setup({
      maxAttempts: 3,
      handler: async (job) => {
        runs.push(job.attempts);
        if (down-- > 0) throw new StoreUnavailableError('ENOSPC', 'no space left');
        return 'done';
      },
    });
    await q.start();
    await q.enqueue({ key: 'a', n: 1 });
    for (let i = 0; i < 8 && runs.length < 7; i++) {
      await until(() => q.inFlight() === 0);
      clock.advance(2000);
      await tick();
    }
    await q.idle();
    expect(runs).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(dead).toEqual([]);
  });
});
