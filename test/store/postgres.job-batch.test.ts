// The PostgreSQL pool's job inserts in batches (src/store/postgres/job-insert-batch.ts), on the run's real server,
// through a Db that counts the statements it sends: inserts made while one is in flight go together as one
// statement, each caller gets what a single insert would give it (its seq, or nothing for a known id, also one
// repeated inside the batch), a key's jobs are numbered in the order they were made, a row PostgreSQL refuses fails
// only its own caller, and a database that cannot be reached fails the batch without trying each row.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db, Statement } from '../../src/store/postgres/db.ts';
import { postgresJobs } from '../../src/store/postgres/jobs.ts';
import type { NewJob } from '../../src/store/repos.ts';
import { isStoreUnavailable } from '../../src/store/errors.ts';
import { pickPostgresPort } from '../support/postgres-port.ts';
import { createMigratedTestDatabase } from '../support/shared-postgres.ts';

const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.end();
});

/** node-postgres on `url`, recording each statement's name. */
function countingDb(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 2000 });
  pool.on('error', () => undefined);
  pools.push(pool);
  const sent: string[] = [];
  const db: Db = {
    rows: async <R>(s: Statement, values: unknown[]) => {
      sent.push(s.name ?? s.text);
      return (await pool.query(s.name ? { name: s.name, text: s.text, values } : { text: s.text, values })).rows as R[];
    },
    announce: () => undefined,
  };
  return { db, pool, sent };
}

const job = (id: string, key: string, payload: unknown = { id }): NewJob<unknown> => ({ id, key, payload, attempts: 0, runAt: 1, enqueuedAt: 1 });

describe('PostgreSQL: job inserts on the pool, in batches', () => {
  it('inserts made while one is written go as one statement; each gets its seq, or nothing for a known id; a key is numbered in call order', async () => {
    const { db, pool, sent } = countingDb(await createMigratedTestDatabase());
    const jobs = postgresJobs(db, 'test', { batchInserts: true });
    expect(await jobs.insert('q', job('known', 'k0'))).toMatchObject({ id: 'known' });
    await new Promise((r) => setImmediate(r)); // that write is over: nothing is in flight
    sent.length = 0;

    const ids = Array.from({ length: 120 }, (_, i) => `j${i}`);
    const made = [...ids.map((id, i) => jobs.insert('q', job(id, `k${i % 6}`))), jobs.insert('q', job('known', 'k0')), jobs.insert('q', job('j7', 'k1'))];
    const results = await Promise.all(made);

    // The first went alone (nothing was in flight), every other in one batch.
    expect(sent).toEqual(['parley_jobs_insert', 'parley_jobs_insert_many']);
    expect(results.slice(0, 120).map((r) => r?.id)).toEqual(ids);
    expect(results[120], 'an id stored before').toBeUndefined();
    expect(results[121], 'an id repeated in the same batch').toBeUndefined();
    const rows = (await pool.query<{ id: string; key: string; seq: string }>(`SELECT id, key, seq FROM jobs WHERE queue = 'q' ORDER BY seq`)).rows;
    expect(rows).toHaveLength(121);
    expect(new Set(rows.map((r) => r.id)).size).toBe(121);
    for (let k = 0; k < 6; k++) {
      const inKey = rows.filter((r) => r.key === `k${k}`).map((r) => r.id);
      expect(inKey.slice(k === 0 ? 1 : 0), `key k${k} in call order`).toEqual(ids.filter((_, i) => i % 6 === k));
    }
    for (const r of results.slice(0, 120)) expect(rows.find((row) => row.id === r!.id)?.seq).toBe(String(r!.seq));
  });

  it('a row PostgreSQL refuses fails only its own caller: the batch is tried again row by row', async () => {
    const { db, pool, sent } = countingDb(await createMigratedTestDatabase());
    const jobs = postgresJobs(db, 'test', { batchInserts: true });
    const first = jobs.insert('q', job('a0', 'k'));
    // Text cannot hold U+0000: PostgreSQL refuses this key, and with it the statement it is in.
    const rest = [jobs.insert('q', job('a1', 'k')), jobs.insert('q', job('bad', 'k\u0000')), jobs.insert('q', job('a2', 'k'))];
    expect(await first).toMatchObject({ id: 'a0' });
    const settled = await Promise.allSettled(rest);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(sent).toEqual(['parley_jobs_insert', 'parley_jobs_insert_many', 'parley_jobs_insert', 'parley_jobs_insert', 'parley_jobs_insert']);
    const stored = (await pool.query<{ id: string }>(`SELECT id FROM jobs WHERE queue = 'q' ORDER BY seq`)).rows.map((r) => r.id);
    expect(stored).toEqual(['a0', 'a1', 'a2']);
  });

  it('two batches taking the same keys in opposite orders (two nodes) do not deadlock: each takes its keys in key order', async () => {
    const url = await createMigratedTestDatabase();
    const a = countingDb(url);
    const b = countingDb(url);
    const [jobsA, jobsB] = [postgresJobs(a.db, 'node-a', { batchInserts: true }), postgresJobs(b.db, 'node-b', { batchInserts: true })];
    const holder = await a.pool.connect();
    const waiting = async (n: number) => {
      for (const end = Date.now() + 15_000; Date.now() < end;) {
        const { rows } = await a.pool.query<{ n: string }>(`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`);
        if (Number(rows[0].n) >= n) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`never ${n} waiting`);
    };
    try {
      // k3's lock is held, so B's batch waits at k3 and A's queues behind it; PostgreSQL grants in arrival order.
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended('job-key:q:k3', 0))`);
      // The first insert of each goes alone (nothing in flight); the next two make the batch.
      const fromB = [jobsB.insert('q', job('b0', 'kb')), jobsB.insert('q', job('b3', 'k3')), jobsB.insert('q', job('b1', 'k1'))];
      await waiting(1);
      const fromA = [jobsA.insert('q', job('a0', 'ka')), jobsA.insert('q', job('a1', 'k1')), jobsA.insert('q', job('a3', 'k3'))];
      await waiting(2);
      await holder.query('COMMIT');
      const all = await Promise.all([...fromA, ...fromB]);
      expect(all.map((j) => j?.id)).toEqual(['a0', 'a1', 'a3', 'b0', 'b3', 'b1']);
      // Not retried row by row after PostgreSQL broke a deadlock.
      expect(a.sent).toEqual(['parley_jobs_insert', 'parley_jobs_insert_many']);
      expect(b.sent).toEqual(['parley_jobs_insert', 'parley_jobs_insert_many']);
    } finally {
      holder.release();
    }
  });

  it('a database that cannot be reached fails every caller of the batch at once, without trying each row', async () => {
    const { db, sent } = countingDb(`postgres://postgres@127.0.0.1:${await pickPostgresPort()}/nothing`);
    const jobs = postgresJobs(db, 'test', { batchInserts: true });
    const settled = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => jobs.insert('q', job(`x${i}`, 'k'))));
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
    expect(sent).toEqual(['parley_jobs_insert', 'parley_jobs_insert_many']);
    const reason = (settled[1] as PromiseRejectedResult).reason as { code?: string };
    expect(reason.code).toBe('ECONNREFUSED');
    expect(isStoreUnavailable(reason)).toBe(false); // the raw error: the store's own `run` turns it into unavailability
  });
});
