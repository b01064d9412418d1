// Jobs on LMDB, in `jobs`, per queue:
//   ['q', queue, seq]    → the job, while it is queued
//   ['id', queue, id]    → its seq while queued; { doneAt } once finished or dead when its id is kept
//   ['dead', queue, seq] → a dead letter
//   ['seq', queue]       → the end of the block of sequence numbers reserved for this queue
// Sequence numbers are never handed out twice, not even across restarts: the first job past the reserved end
// carries the next block's end in its own write, and a restart starts after the stored end.
//
// Claims: one process holds an LMDB store, so what a claim needs lives in that process (`createClaimState`, one
// per store): the leases (they end with the process: after a restart every stored job is claimable at once), and
// an index of each queue's queued jobs by key (sequence number and due time only, loaded from the table on first use
// and kept up to date by this repository's writes once they commit), so a claim or an outlook never decodes the
// backlog. Tokens and lease ends are honoured exactly as on PostgreSQL: both engines pass the same contract.
import type { DeadJob, Job } from '../../model.ts';
import type { JobClaim, JobStore, LeaseCheck, NewJob } from '../../repos.ts';
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

/** A queued job as the index knows it. */
interface Entry {
  seq: number;
  runAt: number;
}

/** One queue's queued jobs by key, each key's in sequence order (its first is the key's head). */
class QueueIndex {
  readonly keys = new Map<string, Entry[]>();
  readonly keyOf = new Map<number, string>();
  get size() {
    return this.keyOf.size;
  }
  put(key: string, seq: number, runAt: number) {
    let list = this.keys.get(key);
    if (!list) this.keys.set(key, (list = []));
    this.keyOf.set(seq, key);
    let i = list.length;
    while (i > 0 && list[i - 1].seq > seq) i--;
    if (i > 0 && list[i - 1].seq === seq) list[i - 1].runAt = runAt;
    else list.splice(i, 0, { seq, runAt });
  }
  remove(seq: number) {
    const key = this.keyOf.get(seq);
    if (key === undefined) return;
    this.keyOf.delete(seq);
    const list = this.keys.get(key) ?? [];
    const i = list.findIndex((e) => e.seq === seq);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.keys.delete(key);
  }
}

/**
 * The store's claim bookkeeping: leases per queue and sequence number, the queues' indexes, and the keys a
 * transaction still open has stored a job for (a claim passes such a key over: the open transaction's job may come
 * before the ones it sees, its number taken first and its commit coming later).
 */
export function createClaimState(kv: Kv) {
  const leases = new Map<string, Map<number, Lease>>();
  const indexes = new Map<string, QueueIndex>();
  const inserting = new Map<string, number>();
  const insertingKey = (queue: string, key: string) => `${queue}\u0000${key}`;
  return {
    lease: (queue: string, seq: number) => leases.get(queue)?.get(seq),
    setLease(queue: string, seq: number, lease: Lease) {
      let q = leases.get(queue);
      if (!q) leases.set(queue, (q = new Map()));
      q.set(seq, lease);
    },
    dropLease: (queue: string, seq: number) => void leases.get(queue)?.delete(seq),
    /** The queue's index, read from the committed table the first time. */
    index(queue: string): QueueIndex {
      let index = indexes.get(queue);
      if (!index) {
        index = new QueueIndex();
        for (const { value } of kv.range<Job>('jobs', { start: ['q', queue], end: ['q', queue, Infinity] })) index.put(value.key, value.seq, value.runAt);
        indexes.set(queue, index);
      }
      return index;
    },
    /** A write committed: applied to the queue's index if it is loaded (otherwise its first read will see it). */
    indexed(queue: string, change: (index: QueueIndex) => void) {
      const index = indexes.get(queue);
      if (index) change(index);
    },
    /** A transaction stored a job of this key; `done` when it has committed or failed. */
    inserting(queue: string, key: string): () => void {
      const k = insertingKey(queue, key);
      inserting.set(k, (inserting.get(k) ?? 0) + 1);
      return () => {
        const n = (inserting.get(k) ?? 1) - 1;
        if (n > 0) inserting.set(k, n);
        else inserting.delete(k);
      };
    },
    isInserting: (queue: string, key: string) => inserting.has(insertingKey(queue, key)),
  };
}
export type ClaimState = ReturnType<typeof createClaimState>;

export function lmdbJobs(s: KvScope, kv: Kv, sequences: Sequences, claims: ClaimState): JobStore {
  /** Applies `change` to the queue's index once this scope's writes have committed (outside a transaction: now). */
  const whenCommitted = (queue: string, change: (index: QueueIndex) => void) =>
    s.afterSettled((committed) => {
      if (committed) claims.indexed(queue, change);
    });

  /**
   * Runs `write` when the lease check passes (no token, or the job's lease holds it). While the write is in flight
   * the lease cannot end, so no claim takes the job; afterwards the lease is gone (the job finished or went back).
   */
  const leased = async (
    queue: string,
    seq: number,
    o: LeaseCheck | undefined,
    write: () => Promise<unknown>,
    change: (index: QueueIndex) => void,
  ): Promise<boolean> => {
    const lease = claims.lease(queue, seq);
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
    if (claims.lease(queue, seq) === lease) claims.dropLease(queue, seq);
    whenCommitted(queue, change);
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
      const index = (i: QueueIndex) => i.put(job.key, seq, job.runAt);
      if (!s.inTransaction) {
        // The hot path (a webhook's message): one conditional block on lmdb-js's write thread, no transaction.
        const applied = await kv.insertIfAbsent({ table: 'jobs', key: idKey(queue, job.id) }, writes);
        if (applied && carry !== undefined) sequences.reserved(queue, carry);
        if (applied) claims.indexed(queue, index);
        return applied ? stored : undefined;
      }
      if (s.get('jobs', idKey(queue, job.id)) !== undefined) return undefined;
      s.afterSettled(claims.inserting(queue, job.key));
      // Not marked reserved: whether the caller's transaction commits is not known here, so the next job carries
      // a reservation again until a write outside a transaction confirms one.
      for (const w of writes) await s.put(w.table, w.key, w.value);
      whenCommitted(queue, index);
      return stored;
    },
    get: async <P>(queue: string, seq: number) => s.get<Job<P>>('jobs', jobKey(queue, seq)),
    pending: async <P>(queue: string) => [...s.range<Job<P>>('jobs', { start: ['q', queue], end: ['q', queue, Infinity] })].map((e) => e.value),
    async claim<P>(queue: string, { now, leaseMs, limit, token, skipKeyPrefixes = [] }: JobClaim) {
      const due: number[] = [];
      for (const [key, [head]] of claims.index(queue).keys) {
        const lease = claims.lease(queue, head.seq);
        if (head.runAt > now || (lease && lease.until > now) || claims.isInserting(queue, key)) continue;
        if (!skipKeyPrefixes.some((p) => key.startsWith(p))) due.push(head.seq);
      }
      const out: Job<P>[] = [];
      for (const seq of due.sort((a, b) => a - b)) {
        if (out.length >= limit) break;
        const job = s.get<Job<P>>('jobs', jobKey(queue, seq));
        if (!job) continue;
        claims.setLease(queue, seq, { token, until: now + leaseMs });
        out.push(job);
      }
      return out;
    },
    async outlook(queue, now) {
      const index = claims.index(queue);
      let nextAt = Infinity;
      for (const [head] of index.keys.values()) {
        const at = Math.max(head.runAt, claims.lease(queue, head.seq)?.until ?? 0);
        if (at > now && at < nextAt) nextAt = at;
      }
      return nextAt < Infinity ? { queued: index.size, nextAt } : { queued: index.size };
    },
    async expedite(queue, now) {
      const late = [...claims.index(queue).keys.values()].flat().filter((e) => e.runAt > now);
      if (late.length === 0) return 0;
      const moved = await s.atomically(async (tx) => {
        const seqs: number[] = [];
        for (const { seq } of late) {
          const job = tx.get<Job>('jobs', jobKey(queue, seq));
          if (!job || job.runAt <= now) continue;
          await tx.put('jobs', jobKey(queue, seq), Object.assign({}, job, { runAt: now }));
          seqs.push(seq);
        }
        return seqs;
      });
      whenCommitted(queue, (index) => {
        for (const seq of moved) {
          const key = index.keyOf.get(seq);
          if (key !== undefined) index.put(key, seq, now);
        }
      });
      return moved.length;
    },
    update: (queue, job, o) =>
      leased(
        queue,
        job.seq,
        o,
        () => s.put('jobs', jobKey(queue, job.seq), job),
        (index) => index.put(job.key, job.seq, job.runAt),
      ),
    finish: (queue, job, { keepId, at, token }) =>
      leased(
        queue,
        job.seq,
        { token },
        () =>
          s.atomically(async (tx) => {
            await tx.remove('jobs', jobKey(queue, job.seq));
            if (keepId) await tx.put('jobs', idKey(queue, job.id), { doneAt: at } satisfies IdEntry);
            else await tx.remove('jobs', idKey(queue, job.id));
          }),
        (index) => index.remove(job.seq),
      ),
    bury: (queue, dead, { keepId, token }) =>
      leased(
        queue,
        dead.seq,
        { token },
        () =>
          s.atomically(async (tx) => {
            await tx.remove('jobs', jobKey(queue, dead.seq));
            if (keepId) await tx.put('jobs', idKey(queue, dead.id), { doneAt: dead.failedAt } satisfies IdEntry);
            else await tx.remove('jobs', idKey(queue, dead.id));
            await tx.put('jobs', deadKey(queue, dead.seq), dead);
          }),
        (index) => index.remove(dead.seq),
      ),
    knows: async (queue, id) => s.get('jobs', idKey(queue, id)) !== undefined,
    deadLetters: async <P>(queue: string, limit: number) =>
      [...s.range<DeadJob<P>>('jobs', { start: ['dead', queue], end: ['dead', queue, Infinity], limit })].map((e) => e.value),
    counts: async (queue) => {
      let keptIds = 0;
      for (const { value } of s.range<IdEntry>('jobs', { start: ['id', queue, ''], end: ['id', queue, '\uffff'] })) if (typeof value === 'object') keptIds++;
      // All three from the committed table (the claim index learns of a commit a moment later).
      const queued = s.count('jobs', { start: ['q', queue], end: ['q', queue, Infinity] });
      return { queued, dead: s.count('jobs', { start: ['dead', queue, -Infinity], end: ['dead', queue, Infinity] }), keptIds };
    },
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
