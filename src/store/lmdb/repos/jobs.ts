// Jobs on LMDB, in `jobs`, per queue:
//   ['q', queue, seq]    → the job, while it is queued
//   ['id', queue, id]    → its seq while queued; { doneAt } once finished or dead when its id is kept
//   ['dead', queue, seq] → a dead letter
//   ['seq', queue]       → the end of the block of sequence numbers reserved for this queue
// Sequence numbers are never handed out twice, not even across restarts: the first job past the reserved end
// carries the next block's end in its own write, and a restart starts after the stored end.
//
// Leases live in memory (`createLeases`, one per store): one process holds an LMDB store, so its leases die with it,
// and a restart finds every stored job claimable at once. Claims scan the queue's stored jobs in sequence order (a
// key's first job is its head); tokens and lease ends are honoured exactly as on PostgreSQL, so both engines pass
// the same contract.
import type { DeadJob, Job } from '../../model.ts';
import type { JobStore, LeaseCheck, NewJob } from '../../repos.ts';
import type { Kv, KvScope, KvWrite } from '../kv.ts';

const SEQ_BLOCK = 1 << 20;
const jobKey = (queue: string, seq: number) => ['q', queue, seq];
const idKey = (queue: string, id: string) => ['id', queue, id];
const deadKey = (queue: string, seq: number) => ['dead', queue, seq];
type IdEntry = number | { doneAt: number };

/** Per process, per queue: the last number handed out and the durable end of the reservation. */
export function createSequences(kv: Kv) {
  const queues = new Map<string, { last: number; reservedEnd: number }>();
  const lastStored = (prefix: string, queue: string) => {
    for (const { key } of kv.range('jobs', { start: [prefix, queue, Infinity], end: [prefix, queue, -Infinity], reverse: true, limit: 1 }))
      return (key as [string, string, number])[2];
    return 0;
  };
  const of = (queue: string) => {
    let q = queues.get(queue);
    if (!q) {
      const end = Math.max(lastStored('q', queue), lastStored('dead', queue), kv.get<number>('jobs', ['seq', queue]) ?? 0);
      queues.set(queue, (q = { last: end, reservedEnd: end }));
    }
    return q;
  };
  return {
    /** The next number, and the reservation its write must carry (when it is past the durable end). */
    next(queue: string): { seq: number; carry?: number } {
      const q = of(queue);
      const seq = ++q.last;
      return seq > q.reservedEnd ? { seq, carry: seq + SEQ_BLOCK } : { seq };
    },
    /** A write carrying `end` is durable. */
    reserved(queue: string, end: number) {
      const q = of(queue);
      if (end > q.reservedEnd) q.reservedEnd = end;
    },
  };
}
export type Sequences = ReturnType<typeof createSequences>;

interface Lease {
  token: string;
  until: number;
}

/**
 * The store's leases, per queue and sequence number (in memory: they end with the process), and the keys a
 * transaction still open has stored a job for: a claim passes such a key over, since the open transaction's job may
 * come before the ones it sees (its number was taken first, its commit comes later).
 */
export function createLeases() {
  const queues = new Map<string, Map<number, Lease>>();
  const inserting = new Map<string, number>();
  const of = (queue: string) => {
    let q = queues.get(queue);
    if (!q) queues.set(queue, (q = new Map()));
    return q;
  };
  const keyOf = (queue: string, key: string) => `${queue}\u0000${key}`;
  return {
    get: (queue: string, seq: number) => queues.get(queue)?.get(seq),
    set: (queue: string, seq: number, lease: Lease) => void of(queue).set(seq, lease),
    delete: (queue: string, seq: number) => void queues.get(queue)?.delete(seq),
    /** A transaction stored a job of this key; `done` when it has committed or failed. */
    inserting(queue: string, key: string): () => void {
      const k = keyOf(queue, key);
      inserting.set(k, (inserting.get(k) ?? 0) + 1);
      return () => {
        const n = (inserting.get(k) ?? 1) - 1;
        if (n > 0) inserting.set(k, n);
        else inserting.delete(k);
      };
    },
    isInserting: (queue: string, key: string) => inserting.has(keyOf(queue, key)),
  };
}
export type Leases = ReturnType<typeof createLeases>;

export function lmdbJobs(s: KvScope, kv: Kv, sequences: Sequences, leases: Leases): JobStore {
  /** Queued jobs of `queue`, in sequence order. */
  const queued = <P>(queue: string) => s.range<Job<P>>('jobs', { start: ['q', queue], end: ['q', queue, Infinity] });

  /**
   * Runs `write` when the lease check passes (no token, or the job's lease holds it). While the write is in flight
   * the lease cannot end, so no claim takes the job; afterwards the lease is gone (the job finished or went back).
   */
  const leased = async (queue: string, seq: number, o: LeaseCheck | undefined, write: () => Promise<unknown>): Promise<boolean> => {
    const lease = leases.get(queue, seq);
    if (o?.token !== undefined && lease?.token !== o.token) return false;
    if (s.get('jobs', jobKey(queue, seq)) === undefined) return false;
    const until = lease?.until;
    if (lease) lease.until = Infinity;
    try {
      await write();
    } catch (err) {
      if (lease && until !== undefined) lease.until = until;
      throw err;
    }
    if (leases.get(queue, seq) === lease) leases.delete(queue, seq);
    return true;
  };

  return {
    async insert<P>(queue: string, job: NewJob<P>) {
      const { seq, carry } = sequences.next(queue);
      const stored = Object.assign({ seq }, job) as Job<P>;
      const writes: KvWrite[] = [
        { table: 'jobs', key: jobKey(queue, seq), value: stored },
        { table: 'jobs', key: idKey(queue, job.id), value: seq },
      ];
      if (carry !== undefined) writes.push({ table: 'jobs', key: ['seq', queue], value: carry });
      if (!s.inTransaction) {
        // The hot path (a webhook's message): one conditional block on lmdb-js's write thread, no transaction.
        const applied = await kv.insertIfAbsent({ table: 'jobs', key: idKey(queue, job.id) }, writes);
        if (applied && carry !== undefined) sequences.reserved(queue, carry);
        return applied ? stored : undefined;
      }
      if (s.get('jobs', idKey(queue, job.id)) !== undefined) return undefined;
      s.afterSettled(leases.inserting(queue, job.key));
      // Not marked reserved: whether the caller's transaction commits is not known here, so the next job carries
      // a reservation again until a write outside a transaction confirms one.
      for (const w of writes) await s.put(w.table, w.key, w.value);
      return stored;
    },
    get: async <P>(queue: string, seq: number) => s.get<Job<P>>('jobs', jobKey(queue, seq)),
    pending: async <P>(queue: string) => [...queued<P>(queue)].map((e) => e.value),
    async claim<P>(queue: string, { now, leaseMs, limit, token }: { now: number; leaseMs: number; limit: number; token: string }) {
      const out: Job<P>[] = [];
      const keys = new Set<string>();
      for (const { value: job } of queued<P>(queue)) {
        if (out.length >= limit) break;
        if (keys.has(job.key)) continue; // not the head of its key
        keys.add(job.key);
        const lease = leases.get(queue, job.seq);
        if (job.runAt > now || (lease && lease.until > now) || leases.isInserting(queue, job.key)) continue;
        leases.set(queue, job.seq, { token, until: now + leaseMs });
        out.push(job);
      }
      return out;
    },
    async outlook(queue, now) {
      let queuedJobs = 0;
      let nextAt = Infinity;
      const keys = new Set<string>();
      for (const { value: job } of queued(queue)) {
        queuedJobs++;
        if (keys.has(job.key)) continue;
        keys.add(job.key);
        const at = Math.max(job.runAt, leases.get(queue, job.seq)?.until ?? 0);
        if (at > now && at < nextAt) nextAt = at;
      }
      return nextAt < Infinity ? { queued: queuedJobs, nextAt } : { queued: queuedJobs };
    },
    expedite: (queue, now) =>
      s.atomically(async (tx) => {
        let n = 0;
        for (const { value: job } of tx.range<Job>('jobs', { start: ['q', queue], end: ['q', queue, Infinity] })) {
          if (job.runAt <= now) continue;
          await tx.put('jobs', jobKey(queue, job.seq), Object.assign({}, job, { runAt: now }));
          n++;
        }
        return n;
      }),
    update: (queue, job, o) => leased(queue, job.seq, o, () => s.put('jobs', jobKey(queue, job.seq), job)),
    finish: (queue, job, { keepId, at, token }) =>
      leased(queue, job.seq, { token }, () =>
        s.atomically(async (tx) => {
          await tx.remove('jobs', jobKey(queue, job.seq));
          if (keepId) await tx.put('jobs', idKey(queue, job.id), { doneAt: at } satisfies IdEntry);
          else await tx.remove('jobs', idKey(queue, job.id));
        }),
      ),
    bury: (queue, dead, { keepId, token }) =>
      leased(queue, dead.seq, { token }, () =>
        s.atomically(async (tx) => {
          await tx.remove('jobs', jobKey(queue, dead.seq));
          if (keepId) await tx.put('jobs', idKey(queue, dead.id), { doneAt: dead.failedAt } satisfies IdEntry);
          else await tx.remove('jobs', idKey(queue, dead.id));
          await tx.put('jobs', deadKey(queue, dead.seq), dead);
        }),
      ),
    knows: async (queue, id) => s.get('jobs', idKey(queue, id)) !== undefined,
    deadLetters: async <P>(queue: string, limit: number) =>
      [...s.range<DeadJob<P>>('jobs', { start: ['dead', queue], end: ['dead', queue, Infinity], limit })].map((e) => e.value),
    prune: (queue, before) =>
      s.atomically(async (tx) => {
        let n = 0;
        for (const { key, value } of tx.range<IdEntry>('jobs', { start: ['id', queue, ''], end: ['id', queue, '\uffff'] })) {
          if (typeof value === 'object' && value.doneAt < before) {
            await tx.remove('jobs', key);
            n++;
          }
        }
        for (const { key, value } of tx.range<DeadJob>('jobs', { start: ['dead', queue, -Infinity], end: ['dead', queue, Infinity] })) {
          if (value.failedAt < before) {
            await tx.remove('jobs', key);
            n++;
          }
        }
        return n;
      }),
  };
}
