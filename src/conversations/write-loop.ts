// One conversation's writes: what its actor produced goes to the store in order, one write at a time, each carrying
// everything asked for since the last one began. Its state is one field (README "The write loop"):
//
//   idle ──request──▶ writing ──committed──▶ idle
//                        │ ├──store cannot write──▶ waitingForStore ──(store recovered, or every 5 s)──▶ writing
//                        │ ├──write failed──▶ retrying ──(250 ms doubling, up to 4 s)──▶ writing
//                        │ │                    └─(5th failure in a row)──▶ abandoned (the host answers the turn with
//                        │ │                       the apology from a fresh actor; 10th: the conversation is dropped)
//                        │ └──another node owns the conversation──▶ fenced (nothing more is written or sent)
//   any ──stop (passivated, lease lost, host stopping)──▶ stopped
//
// abandoned, fenced and stopped are final: a write asked for then is refused. A write that fails while it is in
// flight (the state moved to stopped meanwhile) because the store did not answer may have committed all the same: it
// is handed to the in-doubt writes (in-doubt-writes.ts). A request made while a write is in flight is carried by the
// next write, started as soon as that one ends (committed or not).
import type { Clock, TimerHandle } from '../clock.ts';
import { isOwnershipLost, isStoreUnavailable, StoreUnavailableError } from '../store/errors.ts';
import type { Pending } from './types.ts';

export type WriteLoopState = 'idle' | 'writing' | 'waitingForStore' | 'retrying' | 'abandoned' | 'fenced' | 'stopped';

/** Failed writes in a row before the turn is abandoned; as many again before the conversation is dropped. */
export const MAX_WRITE_ATTEMPTS = 5;
/** A write that failed because the store could not write at all is tried again this often until it recovers. */
export const STORE_RETRY_MS = 5000;
export const retryDelayMs = (failures: number) => Math.min(4000, 250 * 2 ** (failures - 1));

const FINAL: ReadonlySet<WriteLoopState> = new Set(['abandoned', 'fenced', 'stopped']);

interface Request {
  promise: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

function newRequest(): Request {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What an abandoned loop hands to the loop of the actor that replaces it. */
export interface HandedOver {
  pending: Pending[];
  inboxDone: number[];
  failures: number;
  /** The callers waiting for a write: answered by the new loop's first write. */
  waiting?: Request;
}

export interface WriteLoopDeps {
  clock: Clock;
  /**
   * One write of `batch`, removing the inbox entries `inboxDone`: resolves with the entries it stored (a customer
   * message the store already has is not) and what to run once committed. Reads the actor's state before it awaits.
   * `prepared`: what its transaction prepared to run once committed, filled as it goes (a write in doubt hands it on).
   */
  write(batch: Pending[], inboxDone: number[], prepared: (() => void)[]): Promise<{ written: Pending[]; afterCommit: (() => void)[] }>;
  /** A committed write's entries, in order (telemetry, observers, live delivery). */
  publish(written: Pending[]): void;
  /** The whole host is stopping: no retry is scheduled. */
  hostStopping(): boolean;
  /** Another node owns the conversation: the loop is fenced; stop the actor. */
  fenced(err: Error): void;
  /** A write of a stopped loop failed because the store did not answer: it may have committed (then `prepared` runs). */
  inDoubt(batch: Pending[], prepared: (() => void)[]): void;
  /** The first write that failed because the store could not write, since the last one that committed. */
  waitsForStore(err: StoreUnavailableError): void;
  /** A write failed for another reason (`failures` in a row). */
  failed(err: unknown, failures: number): void;
  /** `MAX_WRITE_ATTEMPTS` failures: the loop is abandoned; what it held goes to the actor that replaces this one. */
  abandoned(handed: HandedOver): void;
  /** Twice as many: the loop is abandoned and what it held dropped (the conversation comes back from its stored state). */
  deactivated(dropped: number): void;
  logError(err: unknown, where: string): void;
}

export class WriteLoop {
  state: WriteLoopState = 'idle';
  /** Consecutive failed writes (reset by a committed one). */
  failures = 0;
  private pending: Pending[] = [];
  /** Inbox entries to remove in the next write (those that stored nothing: a message already known). */
  private inboxDone: number[] = [];
  private request?: Request;
  /** The entries of the write in flight. */
  private inFlight: Pending[] = [];
  /** Store waits since the last commit (the first one is reported). */
  private storeWaits = 0;
  /** A deferred write's timer (requestWriteWithin). */
  private deferred?: TimerHandle;

  constructor(private readonly deps: WriteLoopDeps) {}

  get final(): boolean {
    return FINAL.has(this.state);
  }

  /** Nothing waiting, asked for, or in flight. */
  get quiet(): boolean {
    return this.pending.length === 0 && this.state !== 'writing' && this.request === undefined;
  }

  get queued(): number {
    return this.pending.length;
  }

  /** What waits for the next write (not the write in flight), in order. */
  get waiting(): readonly Pending[] {
    return this.pending;
  }

  /** An output (or customer message) to store with the next write. */
  add(entry: Pending): void {
    this.pending.push(entry);
  }

  /** An inbox entry to remove with the next write (it stored nothing). */
  inboxEntryDone(id: number): void {
    this.inboxDone.push(id);
  }

  /**
   * `ack` also acknowledges the customer message `messageId` still waiting to be stored (a re-sent copy): it goes out
   * with the first copy's. False when no such message waits.
   */
  alsoAck(messageId: string, ack: () => void): boolean {
    const entry = [...this.inFlight, ...this.pending].find((e) => e.o.type === 'customer' && e.o.messageId === messageId);
    if (entry?.o.type !== 'customer') return false;
    const first = entry.o.ack;
    entry.o.ack = first ? () => (first(), ack()) : ack;
    return true;
  }

  /** Resolves once everything added so far is durable. Deferred to a microtask: the transition that asked finishes first. */
  requestWrite(): Promise<void> {
    // A final loop writes nothing more: its actor's snapshot no longer follows what it was sent, so a message written
    // with it would be stored as if answered (not busy) and acknowledged, and nobody would answer it.
    if (this.final) return Promise.reject(new StoreUnavailableError('stopped', 'the conversation was stopped on this node; send it again'));
    if (!this.request) {
      this.cancelDeferred();
      this.request = newRequest();
      if (this.state !== 'writing') queueMicrotask(() => void this.run());
    }
    return this.request.promise;
  }

  /**
   * What was added may wait up to `ms` for the next write something else asks for (quiet-outputs.ts); then it is
   * written on its own. Nothing changes when a write is asked for already or one is deferred.
   */
  requestWriteWithin(ms: number): void {
    if (this.final || this.request || this.deferred) return;
    this.deferred = this.deps.clock.setTimeout(() => {
      this.deferred = undefined;
      void this.requestWrite().catch(() => undefined);
    }, ms);
  }

  /** Writes now what waits, deferred or asked for; resolves once that write settled (committed or not). Nothing: undefined. */
  flush(): Promise<void> | undefined {
    if (this.deferred && !this.final) void this.requestWrite().catch(() => undefined);
    return this.request?.promise.catch(() => undefined);
  }

  private cancelDeferred(): void {
    if (this.deferred === undefined) return;
    this.deps.clock.clearTimeout(this.deferred);
    this.deferred = undefined;
  }

  /** A retry timer fired, or the store recovered. */
  retry(): void {
    if (this.final || this.deps.hostStopping()) return;
    void this.requestWrite().catch(() => undefined);
  }

  /** Passivated, the lease lost, the host stopping: nothing more is written. `reason`: what waiting callers get. */
  stop(reason?: Error): void {
    this.end('stopped', reason);
  }

  /** The actor that replaces this one's: its outputs first, then what this loop held (the host filtered it). */
  adopt(handed: HandedOver): Promise<void> {
    this.failures = handed.failures;
    this.inboxDone.push(...handed.inboxDone);
    this.pending.push(...handed.pending);
    const durable = this.requestWrite();
    if (handed.waiting) durable.then(handed.waiting.resolve, handed.waiting.reject);
    return durable;
  }

  private end(state: 'abandoned' | 'fenced' | 'stopped', reason?: Error): void {
    this.state = state;
    this.cancelDeferred();
    if (!reason) return;
    this.pending = [];
    this.inboxDone = [];
    this.request?.reject(reason);
    this.request = undefined;
  }

  private async run(): Promise<void> {
    // Already running (a request made from inside a failure's handling): that run carries it.
    if (this.state === 'writing') return;
    while (this.request && !this.final) {
      const request = this.request;
      this.request = undefined;
      this.state = 'writing';
      const batch = this.pending.splice(0);
      const inboxDone = this.inboxDone.splice(0);
      this.inFlight = batch;
      const prepared: (() => void)[] = [];
      let outcome: Awaited<ReturnType<WriteLoopDeps['write']>>;
      try {
        outcome = await this.deps.write(batch, inboxDone, prepared);
      } catch (err) {
        this.inFlight = [];
        this.failedWrite(err, batch, inboxDone, request, prepared);
        continue;
      }
      this.inFlight = [];
      this.committed(outcome, request);
    }
    if (this.state === 'writing') this.state = 'idle';
  }

  private committed({ written, afterCommit }: Awaited<ReturnType<WriteLoopDeps['write']>>, request: Request): void {
    this.failures = 0;
    this.storeWaits = 0;
    request.resolve();
    this.deps.publish(written);
    // After the outputs: the reply and the acks go out before what the transaction's recorders follow them with (the
    // outcome's events, the rating a decided outcome asks for, a webhook queue woken).
    for (const run of afterCommit) {
      try {
        run();
      } catch (err) {
        this.deps.logError(err, 'after-commit step failed');
      }
    }
  }

  private failedWrite(err: unknown, batch: Pending[], inboxDone: number[], request: Request, prepared: (() => void)[]): void {
    // Kept: the next write (retried below) carries them.
    this.pending.unshift(...batch);
    this.inboxDone.unshift(...inboxDone);
    request.reject(err);
    if (isOwnershipLost(err)) {
      this.end('fenced', err);
      return this.deps.fenced(err);
    }
    if (isStoreUnavailable(err)) {
      if (this.final) return this.deps.inDoubt(batch, prepared);
      // The whole store cannot write (a full disk, the database away): not this conversation's fault, so nothing is
      // abandoned. Retried when the store recovers, and on a slow timer meanwhile.
      if (this.storeWaits++ === 0) this.deps.waitsForStore(err);
      this.state = 'waitingForStore';
      if (!this.deps.hostStopping()) this.deps.clock.setTimeout(() => this.retry(), STORE_RETRY_MS);
      return;
    }
    this.failures++;
    this.deps.failed(err, this.failures);
    if (this.deps.hostStopping() || this.final) return;
    // Bounded: what can't be written (a snapshot that won't encode) must not be retried forever.
    if (this.failures >= 2 * MAX_WRITE_ATTEMPTS) {
      const dropped = this.pending.length;
      this.end('abandoned', new Error('conversation deactivated after repeated write failures'));
      return this.deps.deactivated(dropped);
    }
    if (this.failures === MAX_WRITE_ATTEMPTS) return this.abandon();
    this.state = 'retrying';
    this.deps.clock.setTimeout(() => this.retry(), retryDelayMs(this.failures));
  }

  /** Its turn can't be stored: hand what it holds to the actor that replaces this one (the host filters it). */
  abandon(): void {
    const handed: HandedOver = { pending: this.pending, inboxDone: this.inboxDone, failures: this.failures, waiting: this.request };
    this.pending = [];
    this.inboxDone = [];
    this.request = undefined;
    this.state = 'abandoned';
    this.deps.abandoned(handed);
  }
}
