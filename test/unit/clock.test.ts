import { describe, expect, it } from 'vitest';
import { createClock, createManualClock } from '../../src/clock.ts';

describe('clock', () => {
  it('manual clock fires timers in deadline order, only when due', () => {
    const c = createManualClock(1000);
    const fired: string[] = [];
    c.setTimeout(() => fired.push('b'), 200);
    c.setTimeout(() => fired.push('a'), 100);
    const h = c.setTimeout(() => fired.push('never'), 150);
    c.clearTimeout(h);
    c.advance(99);
    expect(fired).toEqual([]);
    c.advance(1);
    expect(fired).toEqual(['a']);
    c.advance(100);
    expect(fired).toEqual(['a', 'b']);
    expect(c.now()).toBe(1200);
  });

  it('moving the offset moves now() and running timers follow the new time (real timers)', async () => {
    const c = createClock();
    const before = c.now();
    let fired = false;
    c.setTimeout(() => (fired = true), 60_000);
    c.setOffset(59_990);
    expect(c.now() - before).toBeGreaterThanOrEqual(59_990);
    await new Promise((r) => setTimeout(r, 80));
    expect(fired).toBe(true);
    c.setOffset(0);
    expect(Math.abs(c.now() - Date.now())).toBeLessThan(50);
  });

  it('a timer not yet due stays pending after an offset smaller than its delay', async () => {
    const c = createClock();
    let fired = false;
    c.setTimeout(() => (fired = true), 10_000);
    c.setOffset(5_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(fired).toBe(false);
  });
});
