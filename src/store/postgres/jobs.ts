// Durable jobs on PostgreSQL: queued jobs, every known id of a queue (job_ids: queued, or kept as done until pruned)
// and dead letters. Sequence numbers come from one PostgreSQL sequence shared by the queues: increasing within a
// queue and never handed out twice, with gaps.
import type { DeadJob, Job } from '../model.ts';
import type { JobStore } from '../repos.ts';
import { first, json, limitOf, prepared, type Db } from './db.ts';

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
     INSERT INTO job_ids (queue, id, seq) VALUES ($1, $2, nextval('job_seq')) ON CONFLICT DO NOTHING RETURNING seq
   )
   INSERT INTO jobs (queue, ${COLUMNS}) SELECT $1, $2, seq, $3, $4, $5, $6, $7, $8 FROM claimed RETURNING seq`,
);
const GET = prepared('jobs_get', `SELECT ${COLUMNS} FROM jobs WHERE queue = $1 AND seq = $2`);
const PENDING = prepared('jobs_pending', `SELECT ${COLUMNS} FROM jobs WHERE queue = $1 ORDER BY seq`);
const UPDATE = prepared('jobs_update', 'UPDATE jobs SET attempts = $3, run_at = $4, last_error = $5 WHERE queue = $1 AND seq = $2');
// $4: keep the id (as done at $5), or forget it.
const FINISH = prepared(
  'jobs_finish',
  `WITH job AS (DELETE FROM jobs WHERE queue = $1 AND seq = $2),
        kept AS (UPDATE job_ids SET seq = NULL, done_at = $5 WHERE queue = $1 AND id = $3 AND $4),
        forgotten AS (DELETE FROM job_ids WHERE queue = $1 AND id = $3 AND NOT $4)
   SELECT 1`,
);
const BURY = prepared(
  'jobs_bury',
  `WITH job AS (DELETE FROM jobs WHERE queue = $1 AND seq = $2),
        kept AS (UPDATE job_ids SET seq = NULL, done_at = $9 WHERE queue = $1 AND id = $3 AND $12),
        forgotten AS (DELETE FROM job_ids WHERE queue = $1 AND id = $3 AND NOT $12)
   INSERT INTO job_dead_letters (queue, ${COLUMNS}, failed_at, error) VALUES ($1, $3, $2, $4, $5, $6, $7, $8, $10, $9, $11)
   ON CONFLICT (queue, seq) DO UPDATE SET attempts = EXCLUDED.attempts, failed_at = EXCLUDED.failed_at, error = EXCLUDED.error,
     last_error = EXCLUDED.last_error`,
);
const KNOWS = prepared('jobs_knows', 'SELECT 1 FROM job_ids WHERE queue = $1 AND id = $2');
const DEAD = prepared('jobs_dead', `SELECT ${COLUMNS}, failed_at, error FROM job_dead_letters WHERE queue = $1 ORDER BY seq LIMIT $2`);
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

export function postgresJobs(db: Db): JobStore {
  return {
    insert: async (queue, job) => {
      const row = await first(
        db.rows<{ seq: number }>(INSERT, [queue, job.id, job.key, json(job.payload), job.attempts, job.runAt, job.enqueuedAt, job.lastError ?? null]),
      );
      return row ? Object.assign({ seq: row.seq }, job) : undefined;
    },
    get: async <P>(queue: string, seq: number) => {
      const row = await first(db.rows<JobRow>(GET, [queue, seq]));
      return row ? toJob<P>(row) : undefined;
    },
    pending: async <P>(queue: string) => (await db.rows<JobRow>(PENDING, [queue])).map((r) => toJob<P>(r)),
    update: async (queue, job) => {
      await db.rows(UPDATE, [queue, job.seq, job.attempts, job.runAt, job.lastError ?? null]);
    },
    finish: async (queue, job, { keepId, at }) => {
      await db.rows(FINISH, [queue, job.seq, job.id, keepId, at]);
    },
    bury: async (queue, d, { keepId }) => {
      await db.rows(BURY, [queue, d.seq, d.id, d.key, json(d.payload), d.attempts, d.runAt, d.enqueuedAt, d.failedAt, d.lastError ?? null, d.error, keepId]);
    },
    knows: async (queue, id) => (await db.rows(KNOWS, [queue, id])).length > 0,
    deadLetters: async <P>(queue: string, limit: number) =>
      (await db.rows<DeadRow>(DEAD, [queue, limitOf(limit)])).map((r): DeadJob<P> => Object.assign(toJob<P>(r), { failedAt: r.failed_at, error: r.error })),
    prune: async (queue, before) => (await db.rows<{ n: number }>(PRUNE, [queue, before]))[0].n,
  };
}
