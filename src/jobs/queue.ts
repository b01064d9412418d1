// A durable job queue on the Store. Jobs live in LMDB until done; the
// process keeps an in-memory index of them (rebuilt at start) to schedule.
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
// - Sequence numbers come from an in-memory counter rebuilt from the stored
//   jobs when the queue is created (no stored counter to read-modify-write).
// - After `maxAttempts`, or when the handler says `fail`, the job moves to the
//   dead letters (kept, listable).
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Store, StoreWrite } from '../store/types.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import { createSchedule } from './schedule.ts';

/** How soon a job that met a store unable to write runs again. */
const STORE_RETRY_MS = 2000;
/** Sequence numbers reserved per stored reservation. */
const SEQ_BLOCK = 1 << 20;

export interface Job<P> {
  id: string;
  seq: number;
  key: string;
  payload: P;
  attempts: number;
  runAt: number;
  enqueuedAt: number;
  lastError?: string;
}

export interface DeadJob<P> extends Job<P> {
  failedAt: number;
  error: string;
}

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
  /** Inside the caller's transaction: stores the job. Call `accept` with the result after the commit. */
  prepareInTx(payload: P, options?: { id?: string; runAt?: number }): Job<P> | undefined;
  /** Makes prepared jobs runnable (after their transaction committed). */
  accept(jobs: (Job<P> | undefined)[]): void;
  /** Stores and schedules; resolves false when a job with this id already exists. */
  enqueue(payload: P, options?: { id?: string; runAt?: number }): Promise<boolean>;
  /** `enqueue` for several jobs at once; resolves with each stored job, or undefined for a known id. */
  enqueueAll(items: { payload: P; options?: { id?: string; runAt?: number } }[]): Promise<(Job<P> | undefined)[]>;
  start(): void;
  stop(): Promise<void>;
  /** Runs what is due now. */
  wake(): void;
  /** Makes every waiting job due now (an external condition changed, e.g. a sender came back). */
  expedite(): void;
  depth(): number;
  inFlight(): number;
  deadLetters(limit?: number): DeadJob<P>[];
  /** Resolves when nothing is queued or running (tests, shutdown). */
  idle(): Promise<void>;
  /** True when a job with this id is queued, or finished and still remembered (`keepDoneIds`). */
  knows(id: string): boolean;
  /** Removes id tombstones and dead letters older than `before`; resolves with how many. */
  prune(before: number): Promise<number>;
}

type IdEntry = number | { doneAt: number };

export function createJobQueue<P>(o: JobQueueOptions<P>): JobQueue<P> {
  const { store, clock, name } = o;
  const table = store.table<unknown>('jobs');
  const concurrency = o.concurrency ?? 8;
  const leaseMs = o.leaseMs ?? 30_000;
  const maxAttempts = o.maxAttempts ?? 8;
  const log = o.logger.child({ component: `queue:${name}` });

  const jobKey = (seq: number) => ['q', name, seq];
  const idKey = (id: string) => ['id', name, id];
  const deadKey = (seq: number) => ['dead', name, seq];
  const lastStoredSeq = (prefix: string) => {
    for (const { key } of table.range({ start: [prefix, name, Infinity], end: [prefix, name, -Infinity], reverse: true, limit: 1 }))
      return (key as [string, string, number])[2];
    return 0;
  };
  // Sequence numbers are never handed out twice, not even across restarts: ['seq', name] stores the end of a block
  // reserved for this queue, and the first job past the durable end carries the next block's end in its own write.
  // A restart starts after the stored end, so a finished job's number (and its default id) is never reused.
  let reservedEnd = Math.max(lastStoredSeq('q'), lastStoredSeq('dead'), (table.get(['seq', name]) as number | undefined) ?? 0);
  let lastSeq = reservedEnd;
  /** The reservation a job's write must carry (its seq is past the durable end), by seq. */
  const carried = new Map<number, number>();
  const reservationFor = (seq: number) => (seq > reservedEnd ? seq + SEQ_BLOCK : undefined);
  const reserved = (job: Job<P>) => {
    const end = carried.get(job.seq);
    carried.delete(job.seq);
    if (end !== undefined && end > reservedEnd) reservedEnd = end;
  };
  const idGone = (job: Job<P>) => (o.keepDoneIds ? table.putInTx(idKey(job.id), { doneAt: clock.now() } satisfies IdEntry) : table.removeInTx(idKey(job.id)));

  const waiting = createSchedule<Job<P>>();
  const running = new Map<number, { job: Job<P>; lease: TimerHandle; token: number }>();
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
      await store.transaction(() => {
        table.removeInTx(jobKey(job.seq));
        idGone(job);
      });
      return;
    }
    if ('waitUntil' in outcome) {
      const next: Job<P> = Object.assign({}, job, { runAt: outcome.waitUntil, lastError: outcome.reason });
      await table.put(jobKey(job.seq), next);
      wait(next);
      return;
    }
    const error = 'fail' in outcome ? outcome.fail : (outcome.error ?? 'retry');
    const attempts = job.attempts + 1;
    if ('fail' in outcome || attempts >= maxAttempts) {
      const dead: DeadJob<P> = Object.assign({}, job, { attempts, failedAt: clock.now(), error });
      await store.transaction(() => {
        table.removeInTx(jobKey(job.seq));
        idGone(job);
        table.putInTx(deadKey(job.seq), dead);
      });
      log.warn({ jobId: job.id, attempts, error }, 'job dead-lettered');
      o.onDeadLetter?.(dead);
      return;
    }
    const next: Job<P> = Object.assign({}, job, { attempts, runAt: outcome.retryAt, lastError: error });
    await table.put(jobKey(job.seq), next);
    wait(next);
  };

  const run = (job: Job<P>) => {
    const myToken = ++token;
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
      void table.put(jobKey(job.seq), next).catch((err) => log.error({ err }, 'lease bookkeeping failed'));
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

  function pump() {
    if (!started || stopping) return;
    for (const entry of waiting.take(clock.now(), concurrency - running.size)) {
      const job = entry.job ?? (table.get(jobKey(entry.seq)) as Job<P> | undefined);
      if (job) run(job);
      else waiting.release(entry.key); // no longer stored: nothing to run
    }
    const earliest = waiting.nextWakeAt();
    if (earliest < Infinity) armTimer(earliest);
    notifyIdle();
  }

  const newJob = (payload: P, options: { id?: string; runAt?: number }): Job<P> => {
    // Taken even if the job is never stored (a throwing transaction, a duplicate id): a gap in the sequence is harmless.
    const seq = ++lastSeq;
    const now = clock.now();
    return { id: options.id ?? `${name}-${seq}`, seq, key: o.orderingKey(payload), payload, attempts: 0, runAt: options.runAt ?? now, enqueuedAt: now };
  };

  const prepareInTx = (payload: P, options: { id?: string; runAt?: number } = {}): Job<P> | undefined => {
    if (options.id && table.get(idKey(options.id)) !== undefined) return undefined;
    const job = newJob(payload, options);
    table.putInTx(jobKey(job.seq), job);
    table.putInTx(idKey(job.id), job.seq);
    const end = reservationFor(job.seq);
    if (end !== undefined) {
      table.putInTx(['seq', name], end);
      carried.set(job.seq, end); // durable once the caller's transaction committed: see accept
    }
    return job;
  };

  /** Stores a job unless its id is known, as one conditional write (no transaction callback); resolves with it once durable. */
  const insert = async (payload: P, options: { id?: string; runAt?: number }): Promise<Job<P> | undefined> => {
    const job = newJob(payload, options);
    const writes: StoreWrite[] = [
      { table: 'jobs', key: jobKey(job.seq), value: job },
      { table: 'jobs', key: idKey(job.id), value: job.seq },
    ];
    const end = reservationFor(job.seq);
    if (end !== undefined) {
      writes.push({ table: 'jobs', key: ['seq', name], value: end });
      carried.set(job.seq, end);
    }
    let stored = false;
    try {
      stored = await store.insertIfAbsent({ table: 'jobs', key: idKey(job.id) }, writes);
    } finally {
      if (stored) reserved(job);
      else carried.delete(job.seq);
    }
    return stored ? job : undefined;
  };

  const accept = (jobs: (Job<P> | undefined)[]) => {
    // Stored and committed: the schedule keeps only where each job stands.
    for (const j of jobs) {
      if (!j) continue;
      reserved(j);
      if (!running.has(j.seq)) wait(j);
    }
    pump();
  };

  return {
    prepareInTx,
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
      // Issued together so they share a commit; accepted in the order given once all are settled. A job
      // stored while another write failed is still scheduled: its id is known from now on, so a retried
      // delivery would not queue it again.
      const settled = await Promise.allSettled(items.map((i) => insert(i.payload, i.options ?? {})));
      const jobs = settled.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
      accept(jobs);
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      return jobs;
    },
    start() {
      if (started) return;
      started = true;
      for (const { value } of table.range({ start: ['q', name], end: ['q', name, Infinity] })) wait(value as Job<P>);
      if (waiting.size) log.info({ jobs: waiting.size }, 'resuming stored jobs');
      pump();
    },
    async stop() {
      stopping = true;
      clock.clearTimeout(timer);
      const deadline = Date.now() + 2000;
      while (running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const r of running.values()) clock.clearTimeout(r.lease);
    },
    wake: () => pump(),
    expedite() {
      waiting.expedite(clock.now());
      pump();
    },
    depth: () => waiting.size + running.size,
    inFlight: () => running.size,
    deadLetters(limit = 100) {
      const out: DeadJob<P>[] = [];
      for (const { value } of table.range({ start: ['dead', name], end: ['dead', name, Infinity], reverse: false, limit })) out.push(value as DeadJob<P>);
      return out;
    },
    knows: (id) => table.get(idKey(id)) !== undefined,
    prune: (before) =>
      store.transaction(() => {
        let n = 0;
        for (const { key, value } of table.range({ start: ['id', name, ''], end: ['id', name, '\uffff'] })) {
          const entry = value as IdEntry;
          if (typeof entry === 'object' && entry.doneAt < before) {
            table.removeInTx(key);
            n++;
          }
        }
        for (const { key, value } of table.range({ start: ['dead', name, -Infinity], end: ['dead', name, Infinity] })) {
          if ((value as DeadJob<P>).failedAt < before) {
            table.removeInTx(key);
            n++;
          }
        }
        return n;
      }),
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
