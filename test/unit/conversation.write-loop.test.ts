// The write loop of one conversation (src/conversations/write-loop.ts): its states and transitions, with a fake store
// (a `write` that commits, fails, or waits as told) and a manual clock.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { MAX_WRITE_ATTEMPTS, STORE_RETRY_MS, WriteLoop, type HandedOver, type WriteLoopDeps } from '../../src/conversations/write-loop.ts';
import type { Pending } from '../../src/conversations/types.ts';
import { OwnershipLostError, StoreUnavailableError } from '../../src/store/errors.ts';

type Outcome = 'commit' | Error | Promise<void>;

/** A loop over a fake store: each write takes the next outcome of `script` (commit when it runs out). */
function harness(script: Outcome[] = []) {
  const clock = createManualClock(1000);
  const writes: { batch: string[]; inboxDone: number[] }[] = [];
  const published: string[][] = [];
  const afterCommits: number[] = [];
  const seen: Record<string, unknown[]> = { fenced: [], inDoubt: [], waitsForStore: [], failed: [], abandoned: [], deactivated: [] };
  let stopping = false;
  const deps: WriteLoopDeps = {
    clock,
    async write(batch, inboxDone, prepared) {
      writes.push({ batch: batch.map(idOf), inboxDone });
      // What the transaction prepares for after its commit (a recorder's), before the commit's answer: it records how
      // many batches were published when it ran.
      prepared.push(() => void afterCommits.push(published.length));
      const next = script.shift() ?? 'commit';
      if (next instanceof Error) throw next;
      if (next !== 'commit') await next;
      return { written: batch, afterCommit: prepared };
    },
    publish: (written) => void published.push(written.map(idOf)),
    hostStopping: () => stopping,
    fenced: (err) => void seen.fenced.push(err.message),
    inDoubt: (batch, prepared) => void seen.inDoubt.push([...batch.map(idOf), `prepared:${prepared.length}`]),
    waitsForStore: (err) => void seen.waitsForStore.push(err.code),
    failed: (_err, failures) => void seen.failed.push(failures),
    abandoned: (handed: HandedOver) => void seen.abandoned.push(handed),
    deactivated: (dropped) => void seen.deactivated.push(dropped),
    logError: () => undefined,
  };
  const loop = new WriteLoop(deps);
  const reply = (id: string): Pending => ({ o: { type: 'reply', id, turnId: 't', text: id, replyTo: 'm' }, at: clock.now() });
  /** Lets the loop's promises and microtasks run. */
  const flush = async () => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  return { clock, loop, writes, published, afterCommits, seen, reply, flush, stop: () => (stopping = true) };
}

const idOf = (e: Pending) => (e.o.type === 'customer' ? e.o.messageId : 'id' in e.o ? e.o.id : e.o.type);

describe('the write loop', () => {
  it('idle → writing → idle: what was added is written once, in order, then published; requests made while writing go with the next write', async () => {
    let release!: () => void;
    const h = harness([new Promise<void>((r) => (release = r))]);
    expect(h.loop.state).toBe('idle');
    h.loop.add(h.reply('r1'));
    h.loop.add(h.reply('r2'));
    const first = h.loop.requestWrite();
    expect(h.loop.requestWrite()).toBe(first); // one write carries both requests
    await h.flush();
    expect(h.loop.state).toBe('writing');
    h.loop.add(h.reply('r3'));
    const second = h.loop.requestWrite();
    expect(second).not.toBe(first);
    expect(h.loop.quiet).toBe(false);
    release();
    await first;
    await second;
    expect(h.writes.map((w) => w.batch)).toEqual([['r1', 'r2'], ['r3']]);
    expect(h.published).toEqual([['r1', 'r2'], ['r3']]);
    // Each write's after-commit steps ran once, after its outputs were published (the reply before what follows it).
    expect(h.afterCommits).toEqual([1, 2]);
    expect(h.loop.state).toBe('idle');
    expect(h.loop.quiet).toBe(true);
  });

  it('retrying: a failed write is retried after 250 ms, doubling, with what it carried; a commit resets the count', async () => {
    const h = harness([new Error('disk said no'), new Error('disk said no')]);
    h.loop.add(h.reply('r1'));
    await expect(h.loop.requestWrite()).rejects.toThrow('disk said no');
    expect(h.loop.state).toBe('retrying');
    expect(h.seen.failed).toEqual([1]);
    h.clock.advance(249);
    await h.flush();
    expect(h.writes).toHaveLength(1);
    h.clock.advance(1);
    await h.flush();
    expect(h.writes).toHaveLength(2);
    expect(h.loop.state).toBe('retrying');
    h.clock.advance(499);
    await h.flush();
    expect(h.writes).toHaveLength(2);
    h.clock.advance(1);
    await h.flush();
    expect(h.writes.map((w) => w.batch)).toEqual([['r1'], ['r1'], ['r1']]);
    expect(h.published).toEqual([['r1']]);
    expect(h.loop.state).toBe('idle');
    expect(h.loop.failures).toBe(0);
  });

  it(`abandoned: the ${MAX_WRITE_ATTEMPTS}th failure in a row hands what the loop held over; the loop writes nothing more`, async () => {
    const h = harness(Array.from({ length: MAX_WRITE_ATTEMPTS }, () => new Error('snapshot would not encode')));
    h.loop.add(h.reply('r1'));
    h.loop.inboxEntryDone(7);
    void h.loop.requestWrite().catch(() => undefined);
    for (let i = 0; i < MAX_WRITE_ATTEMPTS && h.loop.state !== 'abandoned'; i++) {
      await h.flush();
      h.clock.advance(4000);
    }
    await h.flush();
    expect(h.loop.state).toBe('abandoned');
    expect(h.writes).toHaveLength(MAX_WRITE_ATTEMPTS);
    expect(h.seen.abandoned).toHaveLength(1);
    const handed = h.seen.abandoned[0] as HandedOver;
    expect(handed.pending.map(idOf)).toEqual(['r1']);
    expect(handed.inboxDone).toEqual([7]);
    expect(handed.failures).toBe(MAX_WRITE_ATTEMPTS);
    await expect(h.loop.requestWrite()).rejects.toMatchObject({ code: 'stopped' });
    h.clock.advance(60_000);
    await h.flush();
    expect(h.writes).toHaveLength(MAX_WRITE_ATTEMPTS);

    // The loop that takes over goes on counting: as many failures again and what it holds is dropped.
    const next = harness(Array.from({ length: MAX_WRITE_ATTEMPTS }, () => new Error('snapshot would not encode')));
    void next.loop.adopt(handed).catch(() => undefined);
    for (let i = 0; i < MAX_WRITE_ATTEMPTS && next.loop.state !== 'abandoned'; i++) {
      await next.flush();
      next.clock.advance(4000);
    }
    await next.flush();
    expect(next.writes[0]).toEqual({ batch: ['r1'], inboxDone: [7] });
    expect(next.loop.state).toBe('abandoned');
    expect(next.seen.abandoned).toHaveLength(0);
    expect(next.seen.deactivated).toEqual([1]);
  });

  it('waitingForStore: a store that cannot write is waited for (retried every 5 s, or at once on retry()), reported once, never abandoned', async () => {
    const away = () => new StoreUnavailableError('ENOSPC', 'disk full');
    const h = harness(Array.from({ length: 2 * MAX_WRITE_ATTEMPTS }, away));
    h.loop.add(h.reply('r1'));
    void h.loop.requestWrite().catch(() => undefined);
    for (let i = 0; i < 2 * MAX_WRITE_ATTEMPTS - 1; i++) {
      await h.flush();
      expect(h.loop.state).toBe('waitingForStore');
      h.clock.advance(STORE_RETRY_MS);
    }
    await h.flush();
    expect(h.writes).toHaveLength(2 * MAX_WRITE_ATTEMPTS);
    expect(h.loop.state).toBe('waitingForStore');
    expect(h.seen.waitsForStore).toEqual(['ENOSPC']);
    expect(h.seen.failed).toEqual([]);
    expect(h.seen.abandoned).toEqual([]);
    // The store recovered: the host calls retry() without waiting for the timer.
    h.loop.retry();
    await h.flush();
    expect(h.published).toEqual([['r1']]);
    expect(h.loop.state).toBe('idle');
  });

  it('fenced: another node owns the conversation; nothing held is kept and nothing more is written', async () => {
    const h = harness([new OwnershipLostError('c1', 'node-a', 1, { nodeId: 'node-b', epoch: 2 })]);
    h.loop.add(h.reply('r1'));
    await expect(h.loop.requestWrite()).rejects.toBeInstanceOf(OwnershipLostError);
    expect(h.loop.state).toBe('fenced');
    expect(h.seen.fenced).toHaveLength(1);
    expect(h.loop.queued).toBe(0);
    await expect(h.loop.requestWrite()).rejects.toMatchObject({ code: 'stopped' });
    h.clock.advance(60_000);
    await h.flush();
    expect(h.writes).toHaveLength(1);
    expect(h.published).toEqual([]);
  });

  it('stopped while a write is in flight: a commit is still published; a store that did not answer leaves the write in doubt', async () => {
    let fail!: (e: Error) => void;
    const h = harness([new Promise<void>((_, reject) => (fail = reject))]);
    h.loop.add(h.reply('r1'));
    const waiting = h.loop.requestWrite();
    await h.flush();
    h.loop.stop(new Error('this node lost its cluster lease'));
    expect(h.loop.state).toBe('stopped');
    fail(new StoreUnavailableError('timeout', 'no answer'));
    await expect(waiting).rejects.toThrow();
    await h.flush();
    // Handed on with what its transaction prepared to run once committed.
    expect(h.seen.inDoubt).toEqual([['r1', 'prepared:1']]);
    expect(h.seen.waitsForStore).toEqual([]);
    h.clock.advance(STORE_RETRY_MS);
    await h.flush();
    expect(h.writes).toHaveLength(1);

    let commit!: () => void;
    const g = harness([new Promise<void>((r) => (commit = r))]);
    g.loop.add(g.reply('r2'));
    void g.loop.requestWrite().catch(() => undefined);
    await g.flush();
    g.loop.stop();
    commit();
    await g.flush();
    expect(g.published).toEqual([['r2']]);
    expect(g.loop.state).toBe('stopped');
  });

  it('a host that is stopping schedules no retry', async () => {
    const h = harness([new Error('boom')]);
    h.stop();
    h.loop.add(h.reply('r1'));
    await expect(h.loop.requestWrite()).rejects.toThrow('boom');
    h.clock.advance(60_000);
    await h.flush();
    expect(h.writes).toHaveLength(1);
  });

  it("a customer message re-sent before the first copy is stored is acknowledged with the first copy's write", async () => {
    const h = harness();
    const acks: string[] = [];
    const first: Pending = { o: { type: 'customer', messageId: 'm1', text: 'hi', ack: () => void acks.push('first') }, at: 1 };
    h.loop.add(first);
    expect(h.loop.alsoAck('m1', () => void acks.push('second'))).toBe(true);
    expect(h.loop.alsoAck('m2', () => void acks.push('other'))).toBe(false);
    await h.loop.requestWrite();
    expect(h.writes).toHaveLength(1);
    // The channel's sink calls the entry's ack once it is published (conversation-write.ts `publish`).
    if (first.o.type === 'customer') first.o.ack?.();
    expect(acks).toEqual(['first', 'second']);
  });

  it('a deferred write waits for the next write asked for, or for its time; flush writes it at once; a final loop drops its timer', async () => {
    const h = harness();
    // Carried by the next write asked for: one write, not two.
    h.loop.add(h.reply('quiet1'));
    h.loop.requestWriteWithin(1000);
    h.clock.advance(999);
    await h.flush();
    expect(h.writes).toHaveLength(0);
    expect(h.loop.quiet).toBe(false); // not passivated with it waiting
    h.loop.add(h.reply('loud'));
    await h.loop.requestWrite();
    expect(h.writes.map((w) => w.batch)).toEqual([['quiet1', 'loud']]);
    // Its timer went with it: nothing more is written when the time comes.
    h.clock.advance(1000);
    await h.flush();
    expect(h.writes).toHaveLength(1);

    // Nothing else comes: written on its own once its time is up, not before.
    h.loop.add(h.reply('quiet2'));
    h.loop.requestWriteWithin(1000);
    h.loop.requestWriteWithin(1000); // asked again: still one timer, from the first ask
    h.clock.advance(999);
    await h.flush();
    expect(h.writes).toHaveLength(1);
    h.clock.advance(1);
    await h.flush();
    expect(h.writes.map((w) => w.batch)).toEqual([['quiet1', 'loud'], ['quiet2']]);
    expect(h.loop.quiet).toBe(true);

    // The host settling (stopping) writes it at once.
    h.loop.add(h.reply('quiet3'));
    h.loop.requestWriteWithin(1000);
    await h.loop.flush();
    expect(h.writes.map((w) => w.batch)).toEqual([['quiet1', 'loud'], ['quiet2'], ['quiet3']]);
    expect(h.loop.flush()).toBeUndefined();

    // Stopped: the deferred write never runs.
    h.loop.add(h.reply('quiet4'));
    h.loop.requestWriteWithin(1000);
    h.loop.stop();
    h.clock.advance(5000);
    await h.flush();
    expect(h.writes).toHaveLength(3);
  });
});
