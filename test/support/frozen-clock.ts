// A clock for tests of timed behaviour through a real server: it stands still until the test moves it.
import { createClock, type Clock } from '../../src/clock.ts';

/** A clock standing at `at` until the test moves it; timers fire when their time is reached. */
export function frozenClock(at: number): Clock & { move(ms: number): void } {
  const clock = createClock(() => at);
  return Object.assign(clock, { move: (ms: number) => clock.setOffset(clock.offset() + ms) });
}
