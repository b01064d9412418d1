// The job queue's options webhook delivery uses (issue 34): claims limited by the caller (prefixes it has no room
// for, and a room), a run aborted when its lease ends, and what a dead letter keeps of the payload. Real LMDB, manual
// clock.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createJobQueue, type Job, type JobOutcome } from '../../src/jobs/queue.ts';
import { createLogger } from '../../src/logger.ts';
import { openTestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

const logger = createLogger('silent');
const tick = () => new Promise((r) => setTimeout(r, 10));
async function until(ok: () => boolean, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  while (!ok() && Date.now() < end) await tick();
}
type P = { key: string; n: number; text?: string };

async function setup(o: {
  handler: (job: Job<P>, run: { signal: AbortSignal }) => Promise<JobOutcome>;
  claimLimits?: () => { skipKeyPrefixes: string[]; room: number };
  leaseMs?: number;
  deadPayload?: (p: P) => P;
}) {
  const store = await openTestStore(tempDir());
  const clock = createManualClock(1_000_000);
  const q = createJobQueue<P>(
    Object.assign(
      { store, clock, name: 'limits', logger, handler: o.handler, orderingKey: (p: P) => p.key, maxAttempts: 2, leaseMs: o.leaseMs ?? 10_000, concurrency: 8 },
      o.claimLimits ? { claimLimits: o.claimLimits } : {},
      o.deadPayload ? { deadPayload: o.deadPayload } : {},
    ),
  );
  return { q, store, clock };
}

describe('job queue limits', () => {
  it('claims pass over the prefixes the caller has no room for, and take at most its room; `wake` once there is room', async () => {
    const started: string[] = [];
    const release: (() => void)[] = [];
    let full = true;
    let room = 1;
    const { q, store } = await setup({
      handler: async (job) => {
        started.push(`${job.payload.key}`);
        await new Promise<void>((r) => release.push(r));
        return 'done';
      },
      claimLimits: () => ({ skipKeyPrefixes: full ? ['slow/'] : [], room }),
    });
    for (let i = 0; i < 3; i++) await q.enqueue({ key: `slow/${i}`, n: i });
    for (let i = 0; i < 3; i++) await q.enqueue({ key: `ok/${i}`, n: i });
    await q.start();
    await until(() => started.length === 1);
    expect(started).toEqual(['ok/0']); // room 1, the slow ones passed over though they came first
    room = 10;
    q.wake();
    await until(() => started.length === 3);
    expect(started.sort()).toEqual(['ok/0', 'ok/1', 'ok/2']);
    full = false;
    q.wake();
    await until(() => started.length === 6);
    expect(started.filter((k) => k.startsWith('slow/'))).toHaveLength(3);
    for (const r of release) r();
    await q.idle();
    await q.stop();
    await store.close();
  });

  it('a run whose lease ends is aborted (its signal), and its late outcome is not recorded', async () => {
    let aborted = 0;
    let runs = 0;
    const { q, clock, store } = await setup({
      leaseMs: 1000,
      handler: async (_job, { signal }) => {
        runs++;
        if (runs > 1) return 'done';
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted++;
        return { retryAt: clock.now() + 60_000, error: 'late' };
      },
    });
    await q.enqueue({ key: 'k', n: 1 });
    await q.start();
    await until(() => runs === 1);
    clock.advance(1001);
    await until(() => runs === 2);
    expect(aborted).toBe(1);
    await q.idle();
    expect(await store.jobs.pending('limits')).toEqual([]); // the second run's `done` stands
    await q.stop();
    await store.close();
  });

  it('a dead letter keeps what `deadPayload` leaves of the payload', async () => {
    const { q, store } = await setup({ handler: async () => ({ fail: 'no' }), deadPayload: (p) => ({ key: p.key, n: p.n }) });
    await q.enqueue({ key: 'k', n: 7, text: 'the customer said this' });
    await q.start();
    await until(() => q.depth() === 0);
    await q.idle();
    expect((await q.deadLetters()).map((d) => d.payload)).toEqual([{ key: 'k', n: 7 }]);
    await q.stop();
    await store.close();
  });
});
