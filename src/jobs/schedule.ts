// The in-memory side of a job queue: which stored jobs are waiting, in what
// order they may run. Per ordering key, only the oldest waiting job (the head)
// can run, and only while no job of that key runs; across keys, older first.
// Heads sit in a min-heap by sequence number, so choosing what runs next costs
// O(log n) however long the backlog is. Entries are small (no payload): the
// job itself stays in the store and is read when it runs.

export interface ScheduleEntry<J> {
  seq: number;
  key: string;
  runAt: number;
  /** A version of the job newer than the stored one (its write is still in flight). */
  job?: J;
}

export interface Schedule<J> {
  add(entry: ScheduleEntry<J>): void;
  /** Up to `max` entries due at `now`, oldest first; each is removed and its key marked running. */
  take(now: number, max: number): ScheduleEntry<J>[];
  /** The earliest `runAt` among heads not yet due (Infinity when none). */
  nextWakeAt(): number;
  /** The key's job finished or went back: its next job may run. */
  release(key: string): void;
  /** Every waiting job is due now. */
  expedite(now: number): void;
  has(seq: number): boolean;
  readonly size: number;
}

/** A binary min-heap ordered by `before`. */
class Heap<T> {
  private items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => boolean) {}
  get length() {
    return this.items.length;
  }
  peek(): T | undefined {
    return this.items[0];
  }
  push(v: T) {
    const a = this.items;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(v, a[p])) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = v;
  }
  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const c = l + 1 < a.length && this.before(a[l + 1], a[l]) ? l + 1 : l;
      if (!this.before(a[c], last)) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = last;
    return top;
  }
  clear() {
    this.items = [];
  }
}

export function createSchedule<J>(): Schedule<J> {
  const entries = new Map<number, ScheduleEntry<J>>();
  const byKey = new Map<string, number[]>(); // waiting seqs per key, ascending
  const running = new Set<string>();
  const heads = new Heap<number>((a, b) => a < b); // candidate heads by seq; stale items are skipped when popped
  // Heads popped before their runAt, by runAt (stale items skipped too); `delayed` says which are current.
  const wakeups = new Heap<{ at: number; seq: number }>((a, b) => a.at < b.at);
  const delayed = new Set<number>();

  const headOf = (key: string) => byKey.get(key)?.[0];
  const offerHead = (key: string) => {
    const head = headOf(key);
    if (head !== undefined && !running.has(key)) heads.push(head);
  };

  const insertSorted = (list: number[], seq: number) => {
    if (list.length === 0 || list[list.length - 1] < seq) return void list.push(seq);
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid] < seq) lo = mid + 1;
      else hi = mid;
    }
    if (list[lo] !== seq) list.splice(lo, 0, seq);
  };

  const removeHead = (entry: ScheduleEntry<J>) => {
    entries.delete(entry.seq);
    const list = byKey.get(entry.key);
    if (!list) return;
    list.shift();
    if (list.length === 0) byKey.delete(entry.key);
  };

  return {
    add(entry) {
      entries.set(entry.seq, entry);
      let list = byKey.get(entry.key);
      if (!list) byKey.set(entry.key, (list = []));
      insertSorted(list, entry.seq);
      if (list[0] === entry.seq && !running.has(entry.key)) heads.push(entry.seq);
    },
    take(now, max) {
      for (let w = wakeups.peek(); w !== undefined && w.at <= now; w = wakeups.peek()) {
        wakeups.pop();
        if (delayed.delete(w.seq)) heads.push(w.seq);
      }
      const due: ScheduleEntry<J>[] = [];
      while (due.length < max && heads.length > 0) {
        const seq = heads.pop() as number;
        const e = entries.get(seq);
        if (!e || running.has(e.key) || headOf(e.key) !== seq || delayed.has(seq)) continue;
        if (e.runAt > now) {
          delayed.add(seq);
          wakeups.push({ at: e.runAt, seq });
          continue;
        }
        removeHead(e);
        running.add(e.key);
        due.push(e);
      }
      return due;
    },
    nextWakeAt() {
      // Drop wake-ups of heads that are gone or were expedited.
      for (let w = wakeups.peek(); w !== undefined && !delayed.has(w.seq); w = wakeups.peek()) wakeups.pop();
      return wakeups.peek()?.at ?? Infinity;
    },
    release(key) {
      running.delete(key);
      offerHead(key);
    },
    expedite(now) {
      for (const e of entries.values()) if (e.runAt > now) e.runAt = now;
      for (const seq of delayed) heads.push(seq);
      delayed.clear();
      wakeups.clear();
    },
    has: (seq) => entries.has(seq),
    get size() {
      return entries.size;
    },
  };
}
