// One heavy step per turn of the event loop (src/runtime/loop-pacer.ts): the LLM step opens its model call through it.
import { describe, expect, it } from 'vitest';
import { createLoopPacer, type NextTurn } from '../../src/runtime/loop-pacer.ts';

/** Turns of the event loop that end when the test says so. */
const manualTurns = () => {
  const queued: (() => void)[] = [];
  return {
    defer: ((fn) => void queued.push(fn)) as NextTurn,
    endTurn: () => queued.splice(0).forEach((fn) => fn()),
    pending: () => queued.length,
  };
};
/** Lets every promise continuation that is ready run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('loop pacer', () => {
  it('the first step of a turn starts at once; the others one per later turn, in the order they asked', async () => {
    const turns = manualTurns();
    const pacer = createLoopPacer(turns.defer);
    const started: string[] = [];
    for (const name of ['a', 'b', 'c']) void pacer.next().then(() => started.push(name));
    await settle();
    expect(started).toEqual(['a']);
    turns.endTurn();
    await settle();
    expect(started).toEqual(['a', 'b']);
    turns.endTurn();
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    // nothing waits any more: the pacer goes quiet, and the next step starts at once
    turns.endTurn();
    expect(turns.pending()).toBe(0);
    void pacer.next().then(() => started.push('d'));
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a step that asks while the released ones run waits behind those already waiting', async () => {
    const turns = manualTurns();
    const pacer = createLoopPacer(turns.defer);
    const started: string[] = [];
    void pacer.next().then(() => {
      started.push('a');
      // asked from the step that just started, in the same turn
      void pacer.next().then(() => started.push('a2'));
    });
    void pacer.next().then(() => started.push('b'));
    await settle();
    turns.endTurn();
    await settle();
    turns.endTurn();
    await settle();
    expect(started).toEqual(['a', 'b', 'a2']);
  });

  it('with the real event loop: a callback the first step queues runs before the third step starts', async () => {
    const pacer = createLoopPacer();
    const order: string[] = [];
    await Promise.all([
      pacer.next().then(() => {
        order.push('step 1');
        setImmediate(() => order.push('callback'));
      }),
      pacer.next().then(() => order.push('step 2')),
      pacer.next().then(() => order.push('step 3')),
    ]);
    await settle();
    // Unpaced, all three steps would run one after the other before any callback of the event loop.
    expect(order).toEqual(['step 1', 'step 2', 'callback', 'step 3']);
  });
});
