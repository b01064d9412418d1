// A durable job queue on the store, driven by claims: the store holds the jobs and decides which may run (see
// `JobStore` in src/store/repos.ts); this process runs a worker per queue that claims due jobs, runs them and
// records each outcome with its lease's token. Several processes may run the same queue on one database.
//
// - Per ordering key, at most one job runs at a time, in enqueue order (a key's first stored job is the only one a
//   claim can take, and it stays first until it is finished or dead-lettered).
// - The worker is woken by events, never by a polling sleep: an enqueue or a completion in this process, a job
//   stored by another process (the store's notices: PostgreSQL's LISTEN/NOTIFY, and a re-scan after the listening
//   connection came back or a peer node died), the store writing again after an outage, and one timer for the earliest time a key's
//   first job becomes due or a lease ends.
// - A claim leases the job for `leaseMs`. A handler that neither settles nor fails within it loses the lease: the
//   job goes back with an attempt counted and runs again (handlers must be idempotent). A process that dies holding
//   leases (PostgreSQL) leaves its jobs to the others once the leases end; LMDB's leases live in the process, so
//   after a restart every stored job is claimable at once. An outcome written with a lease that was lost writes
//   nothing: the job belongs to its new claimer.
// - `enqueue` with an id is idempotent while that job exists; with `keepDoneIds` also after it finished (a
//   tombstone under the id index, removed by `prune`), which makes the id index a de-duplication record.
// - Sequence numbers are the store's (never handed out twice, even across restarts).
// - After `maxAttempts`, or when the handler says `fail`, the job moves to the dead letters (kept, listable).
// - A store that cannot write is not the job's fault: the job waits without spending an attempt.
import { randomUUID } from 'node:crypto';
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { DeadJob, Job } from '../store/model.ts';
import type { Store, StoreRepos } from '../store/repos.ts';
import { isStoreUnavailable } from '../store/errors.ts';

/** How soon a job, a claim or an outcome that met a store unable to write is tried again. */
const STORE_RETRY_MS = 2000;
/** While `idle()` is waited on: how often the worker looks at the store again. */
const IDLE_RECHECK_MS = 200;

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
  /** `signal` aborts when the run's lease ends before it settles (the job is given back: stop working on it). */
  handler: (job: Job<P>, run: { signal: AbortSignal }) => Promise<JobOutcome>;
  orderingKey: (payload: P) => string;
  logger: Logger;
  concurrency?: number;
  leaseMs?: number;
  maxAttempts?: number;
  onDeadLetter?: (job: DeadJob<P>) => void;
  /**
   * Asked before each claim: key prefixes the worker has no room for now (a webhook endpoint at its concurrency),
   * whose jobs the claim passes over (they stay stored), and how many jobs it may take at most (besides
   * `concurrency`). Call `wake` when there is room again.
   */
  claimLimits?: () => { skipKeyPrefixes: string[]; room: number };
  /** The payload a dead letter keeps (e.g. without the customer's text); default the job's own. */
  deadPayload?: (payload: P) => P;
  /** Keep the id of a finished or dead job (a tombstone) so the same id is refused until `prune`. */
  keepDoneIds?: boolean;
}

export interface JobQueue<P> {
  /** Inside the caller's transaction: stores the job (undefined: its id is known). Call `accept` with it after the commit. */
  prepare(tx: StoreRepos, payload: P, options?: { id?: string; runAt?: number }): Promise<Job<P> | undefined>;
  /** Prepared jobs were committed: wake the worker (another process may take them too). */
  accept(jobs: (Job<P> | undefined)[]): void;
  /** Stores and schedules; resolves false when a job with this id already exists. */
  enqueue(payload: P, options?: { id?: string; runAt?: number }): Promise<boolean>;
  /** `enqueue` for several jobs at once; resolves with each stored job, or undefined for a known id. */
  enqueueAll(items: { payload: P; options?: { id?: string; runAt?: number } }[]): Promise<(Job<P> | undefined)[]>;
  /** Starts the worker: resolves after its first look at the stored jobs. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Runs what is due now. */
  wake(): void;
  /** Makes every waiting job due now (an external condition changed, e.g. a sender came back). */
  expedite(): void;
  /** Jobs of this queue stored (as of the worker's last look, plus those enqueued here since). */
  depth(): number;
  inFlight(): number;
  deadLetters(limit?: number): Promise<DeadJob<P>[]>;
  /** Resolves when nothing is stored or running (tests, shutdown); looks at the store again every 200 ms meanwhile. */
  idle(): Promise<void>;
  /** True when a job with this id is queued, or finished and still remembered (`keepDoneIds`). */
  knows(id: string): Promise<boolean>;
  /** Removes id tombstones and dead letters older than `before`; resolves with how many. */
  prune(before: number): Promise<number>;
}

interface Running<P> {
  job: Job<P>;
  token: string;
  abort: AbortController;
  lease?: TimerHandle;
  /** `expedite` calls before this run began: a wait it ends in, asked for before a later call, is over at once. */
  expedited: number;
}

export function createJobQueue<P>(o: JobQueueOptions<P>): JobQueue<P> {
  const { store, clock, name } = o;
  const concurrency = o.concurrency ?? 8;
  const leaseMs = o.leaseMs ?? 30_000;
  const maxAttempts = o.maxAttempts ?? 8;
  const log = o.logger.child({ component: `queue:${name}` });
  const keepId = o.keepDoneIds ?? false;

  /** Running here, by seq (a job whose lease ended and was claimed again here is replaced by its new run). */
  const running = new Map<number, Running<P>>();
  let depth = 0;
  let timer: TimerHandle | undefined;
  let timerAt = Infinity;
  let started = false;
  let stopping = false;
  /** A pass (claim, then outlook) is under way; `again`: something happened meanwhile, look once more after it. */
  let passing: Promise<void> | undefined;
  let again = false;
  const unsubscribe: (() => void)[] = [];
  let expedites = 0;
  const idleWaiters = new Set<() => void>();

  const isIdle = () => running.size === 0 && depth === 0 && !passing;
  const notifyIdle = () => {
    if (isIdle()) for (const w of [...idleWaiters]) w();
  };
  const forget = (r: Running<P>) => {
    if (running.get(r.job.seq) === r) running.delete(r.job.seq);
  };

  const armTimer = (at: number) => {
    // Already past (the clock moved while the store answered): look again now; a timer would wait for the next tick
    // of a clock that may not move by itself (a test's manual clock).
    if (at <= clock.now()) return void setImmediate(pump);
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

  /** Writes a run's outcome with its token; resolves false when the lease was lost (nothing written). */
  const record = async (job: Job<P>, token: string, outcome: JobOutcome, expedited = expedites): Promise<boolean> => {
    if (outcome === 'done') {
      const written = await store.jobs.finish(name, job, { keepId, at: clock.now(), token });
      if (written) depth = Math.max(0, depth - 1);
      return written;
    }
    if ('waitUntil' in outcome) {
      // The condition it waits for changed while it ran (`expedite` came after it began): due now.
      const asked = expedites;
      const runAt = expedited < asked ? Math.min(outcome.waitUntil, clock.now()) : outcome.waitUntil;
      const written = await store.jobs.update(name, Object.assign({}, job, { runAt, lastError: outcome.reason }), { token });
      // An `expedite` while this write was in flight did not see the new runAt: it applies now.
      if (written && expedites !== asked && runAt > clock.now()) await store.jobs.expedite(name, clock.now());
      return written;
    }
    const error = 'fail' in outcome ? outcome.fail : (outcome.error ?? 'retry');
    const attempts = job.attempts + 1;
    if ('fail' in outcome || attempts >= maxAttempts) {
      const payload = o.deadPayload ? o.deadPayload(job.payload) : job.payload;
      const dead: DeadJob<P> = Object.assign({}, job, { payload, attempts, failedAt: clock.now(), error });
      const written = await store.jobs.bury(name, dead, { keepId, token });
      if (!written) return false;
      depth = Math.max(0, depth - 1);
      log.warn({ jobId: job.id, attempts, error }, 'job dead-lettered');
      o.onDeadLetter?.(dead);
      return true;
    }
    return store.jobs.update(name, Object.assign({}, job, { attempts, runAt: outcome.retryAt, lastError: error }), { token });
  };

  const sleep = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms));

  /** `record`, tried again while the store cannot write (the job keeps its place among the running meanwhile). */
  const settle = async (r: Running<P>, outcome: JobOutcome) => {
    for (;;) {
      try {
        if (!(await record(r.job, r.token, outcome, r.expedited)))
          log.warn({ jobId: r.job.id }, 'the job’s lease was lost (it is another run’s now); outcome not recorded');
        return;
      } catch (err) {
        if (!isStoreUnavailable(err)) {
          log.error({ err, jobId: r.job.id }, 'job bookkeeping failed; it runs again when its lease ends');
          return;
        }
        if (stopping) return;
        await sleep(STORE_RETRY_MS);
      }
    }
  };

  const run = (job: Job<P>, token: string) => {
    const r: Running<P> = { job, token, abort: new AbortController(), expedited: expedites };
    running.set(job.seq, r);
    r.lease = clock.setTimeout(() => {
      // The handler hung: give the job back (an attempt counted) and free its place.
      if (running.get(job.seq) !== r) return;
      running.delete(job.seq);
      r.abort.abort(new Error('lease expired'));
      log.warn({ jobId: job.id }, 'job lease expired; running it again');
      const outcome: JobOutcome = job.attempts + 1 >= maxAttempts ? { fail: 'lease expired' } : { retryAt: clock.now(), error: 'lease expired' };
      record(job, token, outcome)
        .catch((err: unknown) => {
          if (!isStoreUnavailable(err)) log.error({ err }, 'lease bookkeeping failed');
        })
        .finally(pump);
    }, leaseMs);
    void (async () => {
      let outcome: JobOutcome;
      try {
        outcome = await o.handler(job, { signal: r.abort.signal });
      } catch (err) {
        // A store that cannot write (a full disk, the database away) is not the job's fault: it waits without
        // spending an attempt, so an outage however long never dead-letters an acknowledged message.
        outcome = isStoreUnavailable(err)
          ? { waitUntil: clock.now() + STORE_RETRY_MS, reason: `the store cannot write (${err.code})` }
          : { retryAt: clock.now() + Math.min(30_000, 500 * 2 ** job.attempts), error: (err as Error).message };
      }
      if (running.get(job.seq) !== r) return; // the lease ended: the job was given back
      clock.clearTimeout(r.lease);
      await settle(r, outcome);
      forget(r);
      pump();
    })();
  };

  /** One look at the store: claim what is due (as many as there is room for), then learn when to look next. */
  const pass = async () => {
    // One `now` for both: whatever was not due for the claim is reported by the outlook, even if the clock moved.
    const now = clock.now();
    try {
      const limits = o.claimLimits?.();
      const room = Math.min(concurrency - running.size, limits?.room ?? Infinity);
      if (room > 0) {
        const token = randomUUID();
        const claim = { now, leaseMs, limit: room, token };
        const skip = limits?.skipKeyPrefixes ?? [];
        const jobs = await store.jobs.claim<P>(name, skip.length ? Object.assign(claim, { skipKeyPrefixes: skip }) : claim);
        if (stopping) return; // leases not run end by themselves
        for (const job of jobs) run(job, token);
      }
      const { queued, nextAt } = await store.jobs.outlook(name, now);
      depth = Math.max(queued, running.size);
      if (nextAt !== undefined) armTimer(nextAt);
    } catch (err) {
      if (!isStoreUnavailable(err)) log.error({ err }, 'could not claim jobs; trying again');
      armTimer(clock.now() + STORE_RETRY_MS);
    }
  };

  function pump() {
    if (!started || stopping) return;
    if (passing) {
      again = true;
      return;
    }
    again = false;
    passing = pass().finally(() => {
      passing = undefined;
      if (again && !stopping) pump();
      else notifyIdle();
    });
  }

  const newJob = (payload: P, options: { id?: string; runAt?: number }) => {
    const now = clock.now();
    return { id: options.id ?? `${name}-${randomUUID()}`, key: o.orderingKey(payload), payload, attempts: 0, runAt: options.runAt ?? now, enqueuedAt: now };
  };

  const prepare = (tx: StoreRepos, payload: P, options: { id?: string; runAt?: number } = {}) => tx.jobs.insert(name, newJob(payload, options));

  /** Stores a job unless its id is known; resolves with it once durable. */
  const insert = (payload: P, options: { id?: string; runAt?: number }) => store.jobs.insert(name, newJob(payload, options));

  const accept = (jobs: (Job<P> | undefined)[]) => {
    for (const j of jobs) if (j) depth++;
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
      // pool's connections could commit them in any order). A job stored while another write failed still runs: its
      // id is known from now on, so a retried delivery would not queue it again.
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
      started = true;
      unsubscribe.push(
        store.watchJobs((n) => {
          if ('rescan' in n || n.queue === name) pump();
        }),
        store.onRecovered(() => pump()),
      );
      pump();
      await passing;
      if (depth) log.info({ jobs: depth }, 'resuming stored jobs');
    },
    async stop() {
      stopping = true;
      for (const u of unsubscribe.splice(0)) u();
      clock.clearTimeout(timer);
      const deadline = Date.now() + 2000;
      while ((running.size > 0 || passing) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const r of running.values()) clock.clearTimeout(r.lease);
    },
    wake: () => pump(),
    expedite() {
      expedites++;
      store.jobs.expedite(name, clock.now()).then(pump, (err: unknown) => {
        if (!isStoreUnavailable(err)) log.error({ err }, 'could not expedite waiting jobs');
        pump();
      });
    },
    depth: () => depth,
    inFlight: () => running.size,
    deadLetters: (limit = 100) => store.jobs.deadLetters<P>(name, limit),
    knows: (id) => store.jobs.knows(name, id),
    prune: (before) => store.jobs.prune(name, before),
    idle() {
      if (isIdle()) return Promise.resolve();
      return new Promise<void>((resolve) => {
        // Completions in other processes are not announced (only a key's next job is): while someone waits here,
        // look at the store again now and then, so their last completion is seen.
        const recheck = setInterval(pump, IDLE_RECHECK_MS);
        const w = () => {
          if (isIdle()) {
            idleWaiters.delete(w);
            clearInterval(recheck);
            resolve();
          }
        };
        idleWaiters.add(w);
      });
    },
  };
}
