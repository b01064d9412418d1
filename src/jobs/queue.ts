// A durable job queue on the store. Jobs are stored until done; the process keeps an in-memory index of them
// (rebuilt at start) to schedule.
//
// - Per ordering key, at most one job runs at a time, in enqueue order.
// - Workers are woken by events (enqueue, completion, a timer for the earliest
//   retry), never by a polling sleep.
// - A handler that neither settles nor fails within `leaseMs` loses its lease:
//   the job is run again (handlers must be idempotent). A process crash voids
//   every lease: at start all stored jobs are runnable again.
// - `enqueue` with an id is idempotent while that job exists; with
//   `keepDoneIds` also after it finished (a tombstone under the id index,
//   removed by `prune`), which makes the id index a de-duplication record.
// - Sequence numbers are the store's (never handed out twice, even across restarts).
// - After `maxAttempts`, or when the handler says `fail`, the job moves to the
//   dead letters (kept, listable).
import { randomUUID } from 'node:crypto';
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { DeadJob, Job } from '../store/model.ts';
import type { Store, StoreRepos } from '../store/repos.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import { createSchedule } from './schedule.ts';

/** How soon a job that met a store unable to write runs again. */
const STORE_RETRY_MS = 2000;
/** After the store recovers, the stored jobs are read again at once and once more this much later (see `rescan`). */
const RESCAN_AFTER_RECOVERY_MS = 5000;

export type { DeadJob, Job } from '../store/model.ts';

/**
 * `retryAt` counts an attempt; `waitUntil` does not (the job waits for an outside
 * condition, e.g. a sender to connect; `expedite` ends the wait early).
 */
export type JobOutcome = 'done' | { retryAt: number; error?: string } | { waitUntil: number; reason: string } | { fail: string };

export interface JobQueueOptions<P> {
  store: Store;
  clock: Clock;
  name: string;
  handler: (job: Job<P>) => Promise<JobOutcome>;
  orderingKey: (payload: P) => string;
  logger: Logger;
  concurrency?: number;
  leaseMs?: number;
  maxAttempts?: number;
  onDeadLetter?: (job: DeadJob<P>) => void;
  /** Keep the id of a finished or dead job (a tombstone) so the same id is refused until `prune`. */
  keepDoneIds?: boolean;
}

export interface JobQueue<P> {
  /** Inside the caller's transaction: stores the job (undefined: its id is known). Call `accept` with it after the commit. */
  prepare(tx: StoreRepos, payload: P, options?: { id?: string; runAt?: number }): Promise<Job<P> | undefined>;
  /** Makes prepared jobs runnable (after their transaction committed). */
  accept(jobs: (Job<P> | undefined)[]): void;
  /** Stores and schedules; resolves false when a job with this id already exists. */
  enqueue(payload: P, options?: { id?: string; runAt?: number }): Promise<boolean>;
  /** `enqueue` for several jobs at once; resolves with each stored job, or undefined for a known id. */
  enqueueAll(items: { payload: P; options?: { id?: string; runAt?: number } }[]): Promise<(Job<P> | undefined)[]>;
  /** Loads the stored jobs and starts running them. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Runs what is due now. */
  wake(): void;
  /** Makes every waiting job due now (an external condition changed, e.g. a sender came back). */
  expedite(): void;
  depth(): number;
  inFlight(): number;
  deadLetters(limit?: number): Promise<DeadJob<P>[]>;
  /** Resolves when nothing is queued or running (tests, shutdown). */
  idle(): Promise<void>;
  /** True when a job with this id is queued, or finished and still remembered (`keepDoneIds`). */
  knows(id: string): Promise<boolean>;
  /** Removes id tombstones and dead letters older than `before`; resolves with how many. */
  prune(before: number): Promise<number>;
}

export function createJobQueue<P>(o: JobQueueOptions<P>): JobQueue<P> {
  const { store, clock, name } = o;
  const concurrency = o.concurrency ?? 8;
  const leaseMs = o.leaseMs ?? 30_000;
  const maxAttempts = o.maxAttempts ?? 8;
  const log = o.logger.child({ component: `queue:${name}` });

  const keepId = o.keepDoneIds ?? false;

  const waiting = createSchedule<Job<P>>();
  /** Running (or being loaded to run: no lease yet), by seq. */
  const running = new Map<number, { job?: Job<P>; lease?: TimerHandle; token: number }>();
  /** Back in the schedule; `job` only when the stored record is older than it (its write is in flight). */
  const wait = (job: Job<P>, fresher?: Job<P>) =>
    waiting.add({ seq: job.seq, key: job.key, runAt: (fresher ?? job).runAt, ...(fresher ? { job: fresher } : {}) });
  let timer: TimerHandle | undefined;
  let timerAt = Infinity;
  let started = false;
  let stopping = false;
  let token = 0;
  const idleWaiters = new Set<() => void>();

  const notifyIdle = () => {
    if (waiting.size === 0 && running.size === 0) for (const w of [...idleWaiters]) w();
  };

  const armTimer = (at: number) => {
    if (at >= timerAt) return;
    clock.clearTimeout(timer);
    timerAt = at;
    timer = clock.setTimeout(
      () => {
        timerAt = Infinity;
        timer = undefined;
        pump();
      },
      Math.max(0, at - clock.now()),
    );
  };

  const finish = async (job: Job<P>, outcome: JobOutcome) => {
    if (outcome === 'done') {
      await store.jobs.finish(name, job, { keepId, at: clock.now() });
      return;
    }
    if ('waitUntil' in outcome) {
      const next: Job<P> = Object.assign({}, job, { runAt: outcome.waitUntil, lastError: outcome.reason });
      await store.jobs.update(name, next);
      wait(next);
      return;
    }
    const error = 'fail' in outcome ? outcome.fail : (outcome.error ?? 'retry');
    const attempts = job.attempts + 1;
    if ('fail' in outcome || attempts >= maxAttempts) {
      const dead: DeadJob<P> = Object.assign({}, job, { attempts, failedAt: clock.now(), error });
      await store.jobs.bury(name, dead, { keepId });
      log.warn({ jobId: job.id, attempts, error }, 'job dead-lettered');
      o.onDeadLetter?.(dead);
      return;
    }
    const next: Job<P> = Object.assign({}, job, { attempts, runAt: outcome.retryAt, lastError: error });
    await store.jobs.update(name, next);
    wait(next);
  };

  const run = (job: Job<P>, myToken: number) => {
    const lease = clock.setTimeout(() => {
      // The handler hung: give the job back (same attempt count + 1) and free its key.
      const r = running.get(job.seq);
      if (!r || r.token !== myToken) return;
      running.delete(job.seq);
      log.warn({ jobId: job.id }, 'job lease expired; running it again');
      if (job.attempts + 1 >= maxAttempts) {
        waiting.release(job.key);
        void finish(job, { fail: 'lease expired' }).then(pump, pump);
        return;
      }
      // Back in the schedule at once (so nobody sees the queue idle), persisted after.
      const next: Job<P> = Object.assign({}, job, { attempts: job.attempts + 1, runAt: clock.now(), lastError: 'lease expired' });
      wait(job, next);
      waiting.release(job.key);
      void store.jobs.update(name, next).catch((err) => log.error({ err }, 'lease bookkeeping failed'));
      pump();
    }, leaseMs);
    running.set(job.seq, { job, lease, token: myToken });
    void (async () => {
      let outcome: JobOutcome;
      try {
        outcome = await o.handler(job);
      } catch (err) {
        // A store that cannot write (a full disk, the database away) is not the job's fault: it waits without
        // spending an attempt, so an outage however long never dead-letters an acknowledged message.
        outcome = isStoreUnavailable(err)
          ? { waitUntil: clock.now() + STORE_RETRY_MS, reason: `the store cannot write (${err.code})` }
          : { retryAt: clock.now() + Math.min(30_000, 500 * 2 ** job.attempts), error: (err as Error).message };
      }
      const r = running.get(job.seq);
      if (!r || r.token !== myToken) return; // lease already expired; the rerun owns the job
      clock.clearTimeout(r.lease);
      try {
        await finish(job, outcome);
      } catch (err) {
        const storeDown = isStoreUnavailable(err);
        if (!storeDown) log.error({ err, jobId: job.id }, 'job bookkeeping failed; it will run again');
        wait(job, Object.assign({}, job, { runAt: clock.now() + (storeDown ? STORE_RETRY_MS : 1000) }));
      }
      running.delete(job.seq);
      waiting.release(job.key);
      pump();
    })();
  };

  /** Holds the entry's place among the running, reads the job (unless the schedule has a fresher copy), runs it. */
  const load = (entry: { seq: number; key: string; job?: Job<P> }) => {
    const myToken = ++token;
    running.set(entry.seq, { token: myToken });
    const started = entry.job ? Promise.resolve(entry.job) : store.jobs.get<P>(name, entry.seq);
    started.then(
      (job) => {
        if (running.get(entry.seq)?.token !== myToken) return;
        if (job) return run(job, myToken);
        running.delete(entry.seq); // no longer stored: nothing to run
        waiting.release(entry.key);
        pump();
      },
      (err: unknown) => {
        if (running.get(entry.seq)?.token !== myToken) return;
        // The store could not be read: back in the schedule for a little later.
        if (!isStoreUnavailable(err)) log.error({ err, seq: entry.seq }, 'job could not be read; it will run again');
        running.delete(entry.seq);
        waiting.add({ seq: entry.seq, key: entry.key, runAt: clock.now() + STORE_RETRY_MS });
        waiting.release(entry.key);
        pump();
      },
    );
  };

  function pump() {
    if (!started || stopping) return;
    for (const entry of waiting.take(clock.now(), concurrency - running.size)) load(entry);
    const earliest = waiting.nextWakeAt();
    if (earliest < Infinity) armTimer(earliest);
    notifyIdle();
  }

  // A database can commit a write whose answer never came (the connection broke, or the server stalled, after the
  // COMMIT went out; it lands when the server resumes): the caller saw an error, so the job is stored but not in the
  // schedule, and a retried insert finds its id known. When the store answers again, and once more a little later
  // (for commits that land just after), the stored jobs are read again and the ones the schedule lacks are added.
  // Running one twice is not a risk: a job that is running or waiting is skipped, and one finished meanwhile is no
  // longer stored when it is loaded.
  const rescan = async () => {
    if (!started || stopping) return;
    let found = 0;
    try {
      for (const job of await store.jobs.pending<P>(name)) {
        if (running.has(job.seq) || waiting.has(job.seq)) continue;
        wait(job);
        found++;
      }
    } catch {
      return; // away again: its next recovery rescans
    }
    if (found === 0) return;
    log.info({ jobs: found }, 'stored jobs the schedule did not know (a write whose answer was lost) are scheduled');
    pump();
  };
  let rescanTimer: TimerHandle | undefined;
  const stopRescans = store.onRecovered(() => {
    void rescan();
    clock.clearTimeout(rescanTimer);
    rescanTimer = clock.setTimeout(() => void rescan(), RESCAN_AFTER_RECOVERY_MS);
  });

  const newJob = (payload: P, options: { id?: string; runAt?: number }) => {
    const now = clock.now();
    return { id: options.id ?? `${name}-${randomUUID()}`, key: o.orderingKey(payload), payload, attempts: 0, runAt: options.runAt ?? now, enqueuedAt: now };
  };

  const prepare = (tx: StoreRepos, payload: P, options: { id?: string; runAt?: number } = {}) => tx.jobs.insert(name, newJob(payload, options));

  /** Stores a job unless its id is known; resolves with it once durable. */
  const insert = (payload: P, options: { id?: string; runAt?: number }) => store.jobs.insert(name, newJob(payload, options));

  const accept = (jobs: (Job<P> | undefined)[]) => {
    // Stored and committed: the schedule keeps only where each job stands.
    for (const j of jobs) if (j && !running.has(j.seq)) wait(j);
    pump();
  };

  return {
    prepare,
    accept,
    async enqueue(payload, options = {}) {
      const job = await insert(payload, options);
      accept([job]);
      return job !== undefined;
    },
    async enqueueAll(items) {
      if (items.length === 1) {
        // The common webhook (one message): no settle bookkeeping.
        const job = await insert(items[0].payload, items[0].options ?? {});
        accept([job]);
        return [job];
      }
      // One after another, so their sequence numbers follow the order given on every engine (issued together, a
      // pool's connections could commit them in any order). A job stored while another write failed is still
      // scheduled: its id is known from now on, so a retried delivery would not queue it again.
      const settled: PromiseSettledResult<Job<P> | undefined>[] = [];
      for (const i of items) {
        try {
          settled.push({ status: 'fulfilled', value: await insert(i.payload, i.options ?? {}) });
        } catch (reason) {
          settled.push({ status: 'rejected', reason });
        }
      }
      const jobs = settled.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
      accept(jobs);
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      return jobs;
    },
    async start() {
      if (started) return;
      for (const job of await store.jobs.pending<P>(name)) wait(job);
      started = true;
      if (waiting.size) log.info({ jobs: waiting.size }, 'resuming stored jobs');
      pump();
    },
    async stop() {
      stopping = true;
      clock.clearTimeout(timer);
      clock.clearTimeout(rescanTimer);
      stopRescans();
      const deadline = Date.now() + 2000;
      while (running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const r of running.values()) if (r.lease) clock.clearTimeout(r.lease);
    },
    wake: () => pump(),
    expedite() {
      waiting.expedite(clock.now());
      pump();
    },
    depth: () => waiting.size + running.size,
    inFlight: () => running.size,
    deadLetters: (limit = 100) => store.jobs.deadLetters<P>(name, limit),
    knows: (id) => store.jobs.knows(name, id),
    prune: (before) => store.jobs.prune(name, before),
    idle() {
      if (waiting.size === 0 && running.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const w = () => {
          if (waiting.size === 0 && running.size === 0) {
            idleWaiters.delete(w);
            resolve();
          }
        };
        idleWaiters.add(w);
      });
    },
  };
}
