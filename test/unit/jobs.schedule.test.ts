import { describe, expect, it } from 'vitest';
import { createSchedule, type ScheduleEntry } from '../../src/jobs/schedule.ts';

const e = (seq: number, key: string, runAt = 0): ScheduleEntry<never> => ({ seq, key, runAt });
const seqs = (list: ScheduleEntry<never>[]) => list.map((x) => x.seq);

describe('job schedule', () => {
  it('oldest first across keys; one job per key at a time, in seq order', () => {
    const s = createSchedule<never>();
    for (const x of [e(3, 'a'), e(1, 'b'), e(2, 'a'), e(4, 'c'), e(5, 'b')]) s.add(x);
    expect(seqs(s.take(0, 10))).toEqual([1, 2, 4]); // b's head, a's head (2 before 3), c
    expect(s.take(0, 10)).toEqual([]); // a, b, c are running
    s.release('a');
    s.release('b');
    expect(seqs(s.take(0, 10))).toEqual([3, 5]);
    expect(s.size).toBe(0);
  });

  it('takes at most `max`; the rest wait for the next take', () => {
    const s = createSchedule<never>();
    for (let i = 1; i <= 5; i++) s.add(e(i, `k${i}`));
    expect(seqs(s.take(0, 2))).toEqual([1, 2]);
    expect(seqs(s.take(0, 2))).toEqual([3, 4]);
    expect(s.size).toBe(1);
  });

  it('a head not yet due holds back its key only, and reports when it wakes', () => {
    const s = createSchedule<never>();
    s.add(e(1, 'a', 100));
    s.add(e(2, 'a', 0));
    s.add(e(3, 'b', 0));
    expect(seqs(s.take(50, 10))).toEqual([3]);
    expect(s.nextWakeAt()).toBe(100);
    expect(s.take(99, 10)).toEqual([]);
    expect(seqs(s.take(100, 10))).toEqual([1]);
    expect(s.nextWakeAt()).toBe(Infinity);
    s.release('a');
    expect(seqs(s.take(100, 10))).toEqual([2]);
  });

  it('a job put back (retry) runs before later jobs of its key', () => {
    const s = createSchedule<never>();
    s.add(e(1, 'a'));
    s.add(e(2, 'a'));
    const [first] = s.take(0, 10);
    s.add({ ...first, runAt: 10 }); // back while its key still counts as running
    s.release('a');
    expect(s.take(5, 10)).toEqual([]);
    expect(s.nextWakeAt()).toBe(10);
    expect(seqs(s.take(10, 10))).toEqual([1]);
  });

  it('expedite makes every waiting job due now', () => {
    const s = createSchedule<never>();
    s.add(e(1, 'a', 1000));
    s.add(e(2, 'b', 2000));
    expect(s.take(0, 10)).toEqual([]);
    s.expedite(0);
    expect(seqs(s.take(0, 10))).toEqual([1, 2]);
  });

  it('stays fast with a long backlog: 100,000 jobs over 1,000 keys run in order', () => {
    const s = createSchedule<never>();
    const started = performance.now();
    for (let i = 1; i <= 100_000; i++) s.add(e(i, `k${i % 1000}`));
    const order: number[] = [];
    while (s.size > 0) {
      const due = s.take(0, 16);
      for (const x of due) {
        order.push(x.seq);
        s.release(x.key);
      }
    }
    expect(order).toHaveLength(100_000);
    // Per key, seq order is kept.
    const last = new Map<string, number>();
    for (const seq of order) {
      const key = `k${seq % 1000}`;
      expect(seq).toBeGreaterThan(last.get(key) ?? 0);
      last.set(key, seq);
    }
    // A sort of the whole backlog per take (the old way) would take minutes here.
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('stays fast with many heads waiting for their time: 40,000 retries due one after another', () => {
    const s = createSchedule<never>();
    const started = performance.now();
    for (let i = 1; i <= 40_000; i++) s.add(e(i, `k${i}`, 40_001 - i)); // the newest job is due first
    const order: number[] = [];
    for (let now = 0; now <= 40_000; now++) {
      for (const x of s.take(now, 16)) {
        order.push(x.seq);
        s.release(x.key);
      }
      if (s.size > 0) expect(s.nextWakeAt()).toBe(now + 1);
    }
    expect(order).toHaveLength(40_000);
    expect(order[0]).toBe(40_000);
    expect(order[39_999]).toBe(1);
    // Scanning every waiting head on each take (the first version of this schedule) takes many seconds here.
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
