// Job inserts made on the pool (outside a transaction: a webhook's enqueue, one job committed on its own) are written
// in batches. While one batch is being written, the inserts that arrive wait for it and then go together as one
// statement: one round trip, one commit and one WAL flush for all of them, instead of one each. An insert that
// finds nothing in flight goes at once, so a lone request waits no longer than before. Each caller still resolves
// only once its own row is committed, with the same outcome as a single insert (its seq, or undefined for a known id).
//
// Rows take their key's lock in (queue, key) order, so two batches (two nodes) never wait on each other in a
// cycle, and within a key in the order they arrived, which is the order of their sequence numbers. A batch refused
// for something other than the database being away (a row PostgreSQL will not take) is tried again row by row, so
// one bad row fails only its own caller.
import type { NewJob } from '../repos.ts';
import { unavailability } from './unavailable.ts';
import { json, prepared, type Db } from './db.ts';

/** Rows in one statement at most (the rest wait for the next). */
const MAX_BATCH = 200;

const INSERT_MANY = prepared(
  'jobs_insert_many',
  `WITH input AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::json[], $5::integer[], $6::bigint[], $7::bigint[], $8::text[], $9::integer[])
       AS t(queue, id, key, payload, attempts, run_at, enqueued_at, last_error, n)
   ), claimed AS (
     INSERT INTO job_ids (queue, id, seq)
     SELECT queue, id, parley_next_job_seq(queue, key) FROM (SELECT queue, id, key FROM input ORDER BY queue, key, n) AS ordered
     ON CONFLICT DO NOTHING RETURNING queue, id, seq
   ), job AS (
     INSERT INTO jobs (queue, id, seq, key, payload, attempts, run_at, enqueued_at, last_error)
     SELECT i.queue, i.id, c.seq, i.key, i.payload, i.attempts, i.run_at, i.enqueued_at, i.last_error FROM claimed c JOIN input i USING (queue, id)
     RETURNING queue, id, seq
   )
   SELECT queue, id, seq FROM job`,
);

interface Waiting {
  queue: string;
  job: NewJob<unknown>;
  resolve(seq: number | undefined): void;
  reject(err: unknown): void;
}

const rowKey = (queue: string, id: string) => `${queue}\u0000${id}`;

export function createJobInsertBatcher(o: {
  db: Db;
  /** One job on its own: the single-row statement (jobs.ts). */
  insertOne(queue: string, job: NewJob<unknown>): Promise<number | undefined>;
}) {
  let queued: Waiting[] = [];
  let writing = false;

  const writeMany = async (batch: Waiting[]) => {
    // A second insert of an id already in this batch is a known id, as it would be one statement later.
    const keys = batch.map((w) => rowKey(w.queue, w.job.id));
    const firsts = new Map<string, Waiting>();
    for (const [i, w] of batch.entries()) if (!firsts.has(keys[i])) firsts.set(keys[i], w);
    const rows = [...firsts.values()];
    const inserted = await o.db.rows<{ queue: string; id: string; seq: number }>(INSERT_MANY, [
      rows.map((w) => w.queue),
      rows.map((w) => w.job.id),
      rows.map((w) => w.job.key),
      rows.map((w) => json(w.job.payload)),
      rows.map((w) => w.job.attempts),
      rows.map((w) => w.job.runAt),
      rows.map((w) => w.job.enqueuedAt),
      rows.map((w) => w.job.lastError ?? null),
      rows.map((_, i) => i),
    ]);
    const seqs = new Map(inserted.map((r) => [rowKey(r.queue, r.id), r.seq]));
    batch.forEach((w, i) => w.resolve(firsts.get(keys[i]) === w ? seqs.get(keys[i]) : undefined));
  };

  /** One after another: a key's rows keep the order they were made in. */
  const writeEach = async (batch: Waiting[]) => {
    for (const w of batch) await o.insertOne(w.queue, w.job).then(w.resolve, w.reject);
  };

  const write = async (batch: Waiting[]) => {
    if (batch.length === 1) return o.insertOne(batch[0].queue, batch[0].job).then(batch[0].resolve, batch[0].reject);
    try {
      await writeMany(batch);
    } catch (err) {
      if (unavailability(err)) for (const w of batch) w.reject(err);
      else await writeEach(batch);
    }
  };

  const next = () => {
    if (writing || queued.length === 0) return;
    const batch = queued.slice(0, MAX_BATCH);
    queued = queued.slice(batch.length);
    writing = true;
    void write(batch).finally(() => {
      writing = false;
      next();
    });
  };

  return {
    /** Resolves with the job's seq once committed, or undefined when its id is known. */
    insert(queue: string, job: NewJob<unknown>): Promise<number | undefined> {
      return new Promise((resolve, reject) => {
        queued.push({ queue, job, resolve, reject });
        next();
      });
    },
  };
}
