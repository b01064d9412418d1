// The one clock every timer, TTL, window and counter reads. In test mode its
// offset can be moved (POST /__test__/clock); pending timers then fire at
// their deadline in the new time, as if the wall clock had jumped.
export type TimerHandle = { readonly id: number };

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
  /** Real time plus this offset. 0 resets. */
  setOffset(offsetMs: number): void;
  offset(): number;
}

type Pending = { handle: TimerHandle; deadline: number; fn: () => void; timer: NodeJS.Timeout };

export function createClock(realNow: () => number = Date.now): Clock {
  let offsetMs = 0;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  const now = () => realNow() + offsetMs;

  const arm = (p: Pending) => {
    const delay = Math.max(0, p.deadline - now());
    // Node caps timers at 2^31-1 ms; longer deadlines re-arm when they wake.
    p.timer = setTimeout(
      () => {
        if (p.deadline > now()) return arm(p);
        pending.delete(p.handle.id);
        p.fn();
      },
      Math.min(delay, 2_147_483_647),
    );
    p.timer.unref?.();
  };

  return {
    now,
    setTimeout(fn, ms) {
      const handle = { id: nextId++ };
      const p = { handle, deadline: now() + Math.max(0, ms), fn } as Pending;
      pending.set(handle.id, p);
      arm(p);
      return handle;
    },
    clearTimeout(handle) {
      if (!handle) return;
      const p = pending.get(handle.id);
      if (!p) return;
      clearTimeout(p.timer);
      pending.delete(handle.id);
    },
    setOffset(next) {
      offsetMs = next;
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        arm(p);
      }
    },
    offset: () => offsetMs,
  };
}

/** A manual clock for unit tests: time moves only when `advance` is called. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
}

export function createManualClock(start = 0): ManualClock {
  let t = start;
  let offsetMs = 0;
  let nextId = 1;
  const pending = new Map<number, { deadline: number; fn: () => void }>();
  const now = () => t + offsetMs;
  const fireDue = () => {
    for (;;) {
      let due: [number, { deadline: number; fn: () => void }] | undefined;
      for (const entry of pending) if (entry[1].deadline <= now() && (!due || entry[1].deadline < due[1].deadline)) due = entry;
      if (!due) return;
      pending.delete(due[0]);
      due[1].fn();
    }
  };
  return {
    now,
    setTimeout(fn, ms) {
      const handle = { id: nextId++ };
      pending.set(handle.id, { deadline: now() + Math.max(0, ms), fn });
      return handle;
    },
    clearTimeout(handle) {
      if (handle) pending.delete(handle.id);
    },
    setOffset(next) {
      offsetMs = next;
      fireDue();
    },
    offset: () => offsetMs,
    advance(ms) {
      t += ms;
      fireDue();
    },
  };
}

/** The shape XState's `createActor(…, { clock })` expects. */
export function xstateClock(clock: Clock) {
  return {
    setTimeout: (fn: (...args: unknown[]) => void, ms: number) => clock.setTimeout(() => fn(), ms),
    clearTimeout: (h: unknown) => clock.clearTimeout(h as TimerHandle),
  };
}
