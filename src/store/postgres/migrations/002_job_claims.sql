-- Job claims (src/store/postgres/jobs.ts): a lease on each claimed job, the index a claim's per-key check reads, and
-- sequence numbers that follow commit order within a key.

-- Set by a claim, checked by the claimer's finish/bury/update, cleared when the job goes back to waiting.
ALTER TABLE jobs ADD COLUMN lease_token text, ADD COLUMN lease_until bigint;

-- A claim takes a key's first job only ("no earlier job of the same key"), and the outlook reads each key's first job.
CREATE INDEX jobs_key ON jobs (queue, key, seq);

-- The next sequence number for a job of (queue, key), taken under a transaction-scoped advisory lock on the key: a
-- second transaction storing a job of the same key waits for the first to end, so within a key sequence order is
-- commit order, and no claim can ever see a key's later job without its earlier ones. (Without it, a job numbered
-- 5 could commit after 6 had been claimed, and both would run at once.)
CREATE FUNCTION parley_next_job_seq(queue text, key text) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('job-key:' || queue || ':' || key, 0));
  RETURN nextval('job_seq');
END
$$;
