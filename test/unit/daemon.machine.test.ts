// The daemon machine with a manual clock: the timer, runNow, and recovery after a failed cycle.
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { daemonMachine, type CycleResult } from '../../machines/daemon.ts';
import { createManualClock, xstateClock } from '../../src/clock.ts';

const settle = () => new Promise((r) => setTimeout(r, 0));

function start(cycle: () => Promise<CycleResult>) {
  const clock = createManualClock(0);
  let runs = 0;
  const actor = createActor(daemonMachine.provide({ actors: { runCycle: fromPromise(() => (runs++, cycle())) } }), {
    input: { intervalMs: 60_000 },
    clock: xstateClock(clock),
  });
  actor.start();
  return { actor, clock, runs: () => runs };
}

describe('daemon machine', () => {
  it('runs a cycle once per interval, not before', async () => {
    const d = start(async () => ({ reviewed: 2, followups: 1 }));
    d.clock.advance(59_999);
    await settle();
    expect(d.runs()).toBe(0);
    d.clock.advance(1);
    await settle();
    expect(d.runs()).toBe(1);
    expect(d.actor.getSnapshot().value).toBe('waiting');
    d.clock.advance(60_000);
    await settle();
    expect(d.runs()).toBe(2);
    expect(d.actor.getSnapshot().context).toMatchObject({ cycles: 2, reviewedTotal: 4, followupsTotal: 2, lastCycle: { ok: true, reviewed: 2, followups: 1 } });
    d.actor.stop();
  });

  it('runNow runs a cycle at once; the timer restarts from there', async () => {
    const d = start(async () => ({ reviewed: 0, followups: 0 }));
    d.clock.advance(30_000);
    d.actor.send({ type: 'daemon.runNow' });
    await settle();
    expect(d.runs()).toBe(1);
    d.clock.advance(59_999);
    await settle();
    expect(d.runs()).toBe(1);
    d.clock.advance(1);
    await settle();
    expect(d.runs()).toBe(2);
    d.actor.stop();
  });

  it('a failed cycle is recorded and the next one runs on time', async () => {
    let fail = true;
    const d = start(async () => {
      if (fail) throw new Error('store unavailable');
      return { reviewed: 1, followups: 0 };
    });
    d.clock.advance(60_000);
    await settle();
    expect(d.actor.getSnapshot().value).toBe('waiting');
    expect(d.actor.getSnapshot().context).toMatchObject({ cycles: 1, reviewedTotal: 0, lastCycle: { ok: false, error: 'store unavailable' } });
    fail = false;
    d.clock.advance(60_000);
    await settle();
    expect(d.actor.getSnapshot().context).toMatchObject({ cycles: 2, reviewedTotal: 1, lastCycle: { ok: true } });
    d.actor.stop();
  });
});
