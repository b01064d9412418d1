// Durable jobs on PostgreSQL: queued jobs, every known id of a queue (job_ids: queued, or kept as done until pruned)
// and dead letters. Sequence numbers come from one PostgreSQL sequence shared by the queues: increasing within a
// queue and never handed out twice, with gaps; within a key they are taken under the key's lock (migration 002), so
// they follow commit order there.
//
// Claims: `FOR UPDATE SKIP LOCKED` on the due heads of their keys, then the lease (token, end) written in the same
// statement. Two claimers never get the same job: a row another claim has locked is skipped, and one it has leased
// and committed fails the lease check when it is re-read. A later job of a key is never claimed while an earlier one
// is stored. Every insert, and a finish or bury that leaves a next job for its key, announces `<seq>:<queue>` on
// `parley_jobs` once committed (ids only; notices.ts sends it, listener.ts listens).
import { randomBytes } from 'node:crypto';
import type { DeadJob, Job } from '../model.ts';
import type { JobClaim, JobStore, NewJob } from '../repos.ts';
import { createJobInsertBatcher } from './job-insert-batch.ts';
import { first, json, limitOf, prepared, type Db } from './db.ts';

/** The channel of the job notices: `<seq>:<queue>`. */
export const JOBS_CHANNEL = 'parley_jobs';

interface JobRow {
  id: string;
  seq: number;
  key: string;
  payload: unknown;
  attempts: number;
  run_at: number;
  enqueued_at: number;
  last_error: string | null;
}
interface DeadRow extends JobRow {
  failed_at: number;
  error: string;
}

const COLUMNS = 'id, seq, key, payload, attempts, run_at, enqueued_at, last_error';

// The id row is claimed first: a known id (queued, or kept) stops the statement there, and a concurrent insert of
// the same id waits for this transaction and then finds it.
const INSERT = prepared(
  'jobs_insert',
  `WITH claimed AS (
     INSERT INTO job_ids (queue, id, seq) VALUES ($1, $2, parley_next_job_seq($1, $3)) ON CONFLICT DO NOTHING RETURNING seq
   ), job AS (
     INSERT INTO jobs (queue, ${COLUMNS}) SELECT $1, $2, seq, $3, $4, $5, $6, $7, $8 FROM claimed RETURNING seq
   )
   SELECT job.seq FROM job`,
);
const GET = prepared('jobs_get', `SELECT ${COLUMNS} FROM jobs WHERE queue = $1 AND seq = $2`);
const PENDING = prepared('jobs_pending', `SELECT ${COLUMNS} FROM jobs WHERE queue = $1 ORDER BY seq`);
/**
 * A lease token is `<holder>/<the queue's token>`, the holder being the application_name of every connection of
 * the store that took it. A lease whose holder has no session left (its process died) is over at once, whatever
 * its end says: after a SIGKILL and a restart, the jobs the dead process held run now, not after `lease_ms`.
 */
const HOLDER_GONE = (token: string) =>
  `(${token} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = split_part(${token}, '/', 1)))`;

/** A new store's holder name (at most 63 characters, PostgreSQL's limit for application_name). */
export const jobLeaseHolder = () => `parley-${randomBytes(8).toString('hex')}`;

// $2 now, $3 limit, $4 token, $5 the lease's end, $6 key prefixes to pass over.
const CLAIM = prepared(
  'jobs_claim',
  `WITH due AS (
     SELECT j.seq FROM jobs j
     WHERE j.queue = $1 AND j.run_at <= $2 AND (j.lease_until IS NULL OR j.lease_until <= $2 OR ${HOLDER_GONE('j.lease_token')})
       AND NOT EXISTS (SELECT 1 FROM jobs e WHERE e.queue = $1 AND e.key = j.key AND e.seq < j.seq)
       AND NOT EXISTS (SELECT 1 FROM unnest($6::text[]) p WHERE starts_with(j.key, p))
     ORDER BY j.seq
     LIMIT $3
     FOR UPDATE OF j SKIP LOCKED
   )
   UPDATE jobs SET lease_token = $4, lease_until = $5 FROM due WHERE jobs.queue = $1 AND jobs.seq = due.seq
   RETURNING ${COLUMNS.split(', ')
     .map((c) => `jobs.${c}`)
     .join(', ')}`,
);
// Each key's head: claimable at its runAt, or when its lease ends.
const OUTLOOK = prepared(
  'jobs_outlook',
  `SELECT (SELECT count(*) FROM jobs WHERE queue = $1) AS queued,
          (SELECT min(at) FROM (SELECT DISTINCT ON (key) greatest(run_at, CASE WHEN ${HOLDER_GONE('lease_token')} THEN 0 ELSE coalesce(lease_until, 0) END) AS at
                                FROM jobs WHERE queue = $1 ORDER BY key, seq) heads
           WHERE at > $2) AS next_at`,
);
const EXPEDITE = prepared(
  'jobs_expedite',
  `WITH moved AS (UPDATE jobs SET run_at = $2 WHERE queue = $1 AND run_at > $2 RETURNING seq),
        counted AS (SELECT count(*) AS n, min(seq) AS seq FROM moved)
   SELECT counted.n, counted.seq FROM counted`,
);
// $6: the token the lease must hold (NULL: no check). The lease is given back.
const UPDATE = prepared(
  'jobs_update_leased',
  `UPDATE jobs SET attempts = $3, run_at = $4, last_error = $5, lease_token = NULL, lease_until = NULL
   WHERE queue = $1 AND seq = $2 AND ($6::text IS NULL OR lease_token = $6) RETURNING seq`,
);
/** The next job of the removed job's key, announced so that a worker with room takes it. */
const SUCCESSOR = `successor AS (SELECT min(n.seq) AS seq FROM jobs n, job WHERE n.queue = $1 AND n.key = job.key AND n.seq > $2)
   SELECT (SELECT count(*) FROM job) AS n, successor.seq AS successor FROM successor`;
// $4: keep the id (as done at $5), or forget it. $6: the token.
const FINISH = prepared(
  'jobs_finish_leased',
  `WITH job AS (DELETE FROM jobs WHERE queue = $1 AND seq = $2 AND ($6::text IS NULL OR lease_token = $6) RETURNING key),
        kept AS (UPDATE job_ids SET seq = NULL, done_at = $5 WHERE queue = $1 AND id = $3 AND $4 AND EXISTS (SELECT 1 FROM job)),
        forgotten AS (DELETE FROM job_ids WHERE queue = $1 AND id = $3 AND NOT $4 AND EXISTS (SELECT 1 FROM job)),
        ${SUCCESSOR}`,
);
// $12: keep the id; $13: the token.
const BURY = prepared(
  'jobs_bury_leased',
  `WITH job AS (DELETE FROM jobs WHERE queue = $1 AND seq = $2 AND ($13::text IS NULL OR lease_token = $13) RETURNING key),
        kept AS (UPDATE job_ids SET seq = NULL, done_at = $9 WHERE queue = $1 AND id = $3 AND $12 AND EXISTS (SELECT 1 FROM job)),
        forgotten AS (DELETE FROM job_ids WHERE queue = $1 AND id = $3 AND NOT $12 AND EXISTS (SELECT 1 FROM job)),
        dead AS (
          INSERT INTO job_dead_letters (queue, ${COLUMNS}, failed_at, error) SELECT $1, $3, $2, $4, $5, $6, $7, $8, $10, $9, $11 FROM job
          ON CONFLICT (queue, seq) DO UPDATE SET attempts = EXCLUDED.attempts, failed_at = EXCLUDED.failed_at, error = EXCLUDED.error,
            last_error = EXCLUDED.last_error
        ),
        ${SUCCESSOR}`,
);
const KNOWS = prepared('jobs_knows', 'SELECT 1 FROM job_ids WHERE queue = $1 AND id = $2');
const DEAD = prepared('jobs_dead', `SELECT ${COLUMNS}, failed_at, error FROM job_dead_letters WHERE queue = $1 ORDER BY seq LIMIT $2`);
const COUNTS = prepared(
  'jobs_counts',
  `SELECT (SELECT count(*) FROM jobs WHERE queue = $1) AS queued,
          (SELECT count(*) FROM job_dead_letters WHERE queue = $1) AS dead,
          (SELECT count(*) FROM job_ids WHERE queue = $1 AND done_at IS NOT NULL) AS kept`,
);
const PRUNE = prepared(
  'jobs_prune',
  `WITH ids AS (DELETE FROM job_ids WHERE queue = $1 AND done_at < $2 RETURNING 1),
        dead AS (DELETE FROM job_dead_letters WHERE queue = $1 AND failed_at < $2 RETURNING 1)
   SELECT (SELECT count(*) FROM ids) + (SELECT count(*) FROM dead) AS n`,
);

function toJob<P>(r: JobRow): Job<P> {
  const job: Job<P> = { id: r.id, seq: r.seq, key: r.key, payload: r.payload as P, attempts: r.attempts, runAt: r.run_at, enqueuedAt: r.enqueued_at };
  if (r.last_error !== null) job.lastError = r.last_error;
  return job;
}

/** `batchInserts`: the pool's repository, whose inserts each commit on their own, writes them in batches (job-insert-batch.ts). */
export function postgresJobs(db: Db, holder: string, o: { batchInserts?: boolean } = {}): JobStore {
  const leased = (token: string | undefined) => (token === undefined ? null : `${holder}/${token}`);
  const announce = (queue: string, seq: number | null) => {
    if (seq !== null) db.announce(JOBS_CHANNEL, `${seq}:${queue}`);
  };
  /** A finish or bury: the removed job's key may have a next job, which a worker with room can now take. */
  const removed = (queue: string, [row]: { n: number; successor: number | null }[]) => {
    if (row.n > 0) announce(queue, row.successor);
    return row.n > 0;
  };
  const insertOne = async (queue: string, job: NewJob<unknown>) =>
    (await first(db.rows<{ seq: number }>(INSERT, [queue, job.id, job.key, json(job.payload), job.attempts, job.runAt, job.enqueuedAt, job.lastError ?? null])))
      ?.seq;
  const batcher = o.batchInserts ? createJobInsertBatcher({ db, insertOne }) : undefined;
  return {
    insert: async (queue, job) => {
      const seq = await (batcher ? batcher.insert(queue, job) : insertOne(queue, job));
      if (seq === undefined) return undefined;
      announce(queue, seq);
      return Object.assign({ seq }, job);
    },
    get: async <P>(queue: string, seq: number) => {
      const row = await first(db.rows<JobRow>(GET, [queue, seq]));
      return row ? toJob<P>(row) : undefined;
    },
    pending: async <P>(queue: string) => (await db.rows<JobRow>(PENDING, [queue])).map((r) => toJob<P>(r)),
    claim: async <P>(queue: string, c: JobClaim) =>
      (await db.rows<JobRow>(CLAIM, [queue, c.now, limitOf(c.limit), leased(c.token), c.now + c.leaseMs, c.skipKeyPrefixes ?? []]))
        .map((r) => toJob<P>(r))
        .sort((a, b) => a.seq - b.seq),
    outlook: async (queue, now) => {
      const [row] = await db.rows<{ queued: number; next_at: number | null }>(OUTLOOK, [queue, now]);
      return row.next_at === null ? { queued: row.queued } : { queued: row.queued, nextAt: row.next_at };
    },
    expedite: async (queue, now) => {
      const [row] = await db.rows<{ n: number; seq: number | null }>(EXPEDITE, [queue, now]);
      if (row.n > 0) announce(queue, row.seq);
      return row.n;
    },
    update: async (queue, job, o) => (await db.rows(UPDATE, [queue, job.seq, job.attempts, job.runAt, job.lastError ?? null, leased(o?.token)])).length > 0,
    finish: async (queue, job, { keepId, at, token }) => removed(queue, await db.rows(FINISH, [queue, job.seq, job.id, keepId, at, leased(token)])),
    bury: async (queue, d, { keepId, token }) =>
      removed(
        queue,
        await db.rows(BURY, [
          queue,
          d.seq,
          d.id,
          d.key,
          json(d.payload),
          d.attempts,
          d.runAt,
          d.enqueuedAt,
          d.failedAt,
          d.lastError ?? null,
          d.error,
          keepId,
          leased(token),
        ]),
      ),
    knows: async (queue, id) => (await db.rows(KNOWS, [queue, id])).length > 0,
    deadLetters: async <P>(queue: string, limit: number) =>
      (await db.rows<DeadRow>(DEAD, [queue, limitOf(limit)])).map((r): DeadJob<P> => Object.assign(toJob<P>(r), { failedAt: r.failed_at, error: r.error })),
    counts: async (queue) => {
      const [row] = await db.rows<{ queued: number; dead: number; kept: number }>(COUNTS, [queue]);
      return { queued: row.queued, dead: row.dead, keptIds: row.kept };
    },
    prune: async (queue, before) => (await db.rows<{ n: number }>(PRUNE, [queue, before]))[0].n,
  };
}
