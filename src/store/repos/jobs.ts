// Durable job queues with leased claims (src/jobs/). Part of the store's interface (../repos.ts).
import type { DeadJob, Job } from '../model.ts';

export type NewJob<P> = Omit<Job<P>, 'seq'>;

/** The lease a claim takes: `token` is the claimer's, and only a write with it records the job's outcome. */
export interface JobClaim {
  now: number;
  /** The lease lasts until `now + leaseMs`; after that another claim may take the job (the handler is presumed lost). */
  leaseMs: number;
  limit: number;
  token: string;
  /**
   * Jobs whose key starts with one of these are passed over (not claimed, and they do not count towards `limit`):
   * a worker that has no room for a group of jobs (a webhook endpoint at its concurrency, or its circuit open)
   * leaves them stored and takes the others.
   */
  skipKeyPrefixes?: string[];
}

/** How much of a queue is stored: queued jobs, dead letters and finished jobs' kept ids (each until pruned). */
export interface JobCounts {
  queued: number;
  dead: number;
  keptIds: number;
}

/** What a worker needs to know between claims: how many jobs are stored and when the next may become claimable. */
export interface JobOutlook {
  /** Jobs of the queue stored now (due, waiting or leased by anyone). */
  queued: number;
  /**
   * The earliest time after `now` at which a key's first job becomes claimable (its `runAt`, or the end of its lease);
   * undefined when none will by itself (nothing stored, or only jobs due now).
   */
  nextAt?: number;
}

/** Written with `token`: the write happens only while the job's lease holds that token (resolves false otherwise). */
export interface LeaseCheck {
  token?: string;
}

/**
 * Durable jobs, per queue, with claims. Per key, jobs run one at a time in sequence order: only a key's first stored
 * job (its head) can be claimed, and it stays the head until it is finished or buried, so the next job of the key
 * waits for it (also while it waits for a retry or is leased). A claim leases jobs to the caller's token; `update`,
 * `finish` and `bury` with a token write nothing and resolve false once the lease went to another claim (expired and
 * taken) or the job is gone. Without a token they write unconditionally (imports, tools). The retry policy, attempts
 * and dead-lettering decisions are the queue's (src/jobs/queue.ts).
 */
export interface JobStore {
  /** Stores a job and gives it the queue's next sequence number; undefined when its id is known (queued, or kept as done). */
  insert<P>(queue: string, job: NewJob<P>): Promise<Job<P> | undefined>;
  get<P>(queue: string, seq: number): Promise<Job<P> | undefined>;
  /** Every stored job of the queue, in sequence order. */
  pending<P>(queue: string): Promise<Job<P>[]>;
  /**
   * Leases up to `limit` jobs to `token`, in sequence order: each the head of its key, due (`runAt <= now`) and not
   * leased (or its lease ended at or before `now`). Concurrent claims, from this process or another, never get the
   * same job while its lease lasts. Call it outside a transaction.
   */
  claim<P>(queue: string, c: JobClaim): Promise<Job<P>[]>;
  outlook(queue: string, now: number): Promise<JobOutlook>;
  /** Makes every job waiting for a later `runAt` due at `now`; resolves with how many. */
  expedite(queue: string, now: number): Promise<number>;
  /** Writes a job's new state (attempts, runAt, lastError) and gives its lease back. */
  update<P>(queue: string, job: Job<P>, o?: LeaseCheck): Promise<boolean>;
  /** Removes a finished job; with `keepId` its id stays known (refused by `insert`) until pruned. */
  finish(queue: string, job: Job<unknown>, o: { keepId: boolean; at: number } & LeaseCheck): Promise<boolean>;
  /** Moves a job to the dead letters (same `keepId` rule). */
  bury(queue: string, dead: DeadJob<unknown>, o: { keepId: boolean } & LeaseCheck): Promise<boolean>;
  knows(queue: string, id: string): Promise<boolean>;
  deadLetters<P>(queue: string, limit: number): Promise<DeadJob<P>[]>;
  /** Totals of the queue (not a page's). */
  counts(queue: string): Promise<JobCounts>;
  /** Forgets kept ids finished before `before`, and dead letters that failed before it; resolves with how many. */
  prune(queue: string, before: number): Promise<number>;
}

/**
 * A job stored by any process on the store (PostgreSQL: a NOTIFY, ids only); `rescan` when notices may have been
 * missed (the listening connection was lost and is back): look at every queue again.
 */
export type JobNotice = { queue: string; seq: number } | { rescan: true };
