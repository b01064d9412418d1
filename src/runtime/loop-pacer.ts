// Lets one heavy step start per turn of the event loop. A store commit that
// makes a hundred customer messages durable at once starts a hundred turns in
// the same turn of the loop, and each one's first LLM call (building the
// request, opening it through undici; measured when that was the `openai` client) would run back to
// back: the model's chunks for replies already streaming wait behind all of
// them. Paced, the loop reads sockets between two of them: the longest stall
// of a burst of 100 turn starts on LMDB fell from ~0.5 s to ~0.2 s on the shared,
// loaded machine (bench/turn-burst.ts, BENCHMARKS.md); the rest is the
// conversation actors' own transitions. The first step of a turn of the loop
// starts at once; the others start one per later turn, in the order they
// asked (the work is the same, only interleaved with I/O).

/** Runs `fn` in the next turn of the event loop (after the I/O it polls). */
export type NextTurn = (fn: () => void) => void;

export interface LoopPacer {
  /** Resolves when this step may start. */
  next(): Promise<void>;
}

const nextTurn: NextTurn = (fn) => void setImmediate(fn);

export function createLoopPacer(defer: NextTurn = nextTurn): LoopPacer {
  const waiting: (() => void)[] = [];
  /** A step started in this turn of the loop: the next one waits for a later turn. */
  let busy = false;
  const endTurn = () => {
    const start = waiting.shift();
    if (!start) {
      busy = false;
      return;
    }
    start();
    defer(endTurn);
  };
  return {
    next() {
      if (!busy) {
        busy = true;
        defer(endTurn);
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}
