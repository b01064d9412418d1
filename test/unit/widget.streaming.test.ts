// Issue 20: the widget's state while a reply is written (widget/src/streaming.ts through the reducer).
import { describe, expect, it } from 'vitest';
import type { WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';
import { initialState, reduce, type WidgetState } from '../../widget/src/state.ts';

const frames = (s: WidgetState, ...fs: WidgetServerFrame[]) => fs.reduce((st, frame) => reduce(st, { type: 'frame', frame }), s);
const ready: WidgetServerFrame = { type: 'ready', customerId: 'c', conversationId: 'x', history: [] };

describe('widget streaming state', () => {
  it('deltas grow one reply; its final message replaces it and alone counts as new', () => {
    let s = frames(initialState, ready, { type: 'typing', on: true }, { type: 'delta', id: 'r1', text: 'Order' });
    expect(s.streaming).toEqual({ id: 'r1', text: 'Order' });
    s = frames(s, { type: 'delta', id: 'r1', text: ' 1001' }, { type: 'delta', id: 'r1', text: ' shipped.' });
    expect(s.streaming).toEqual({ id: 'r1', text: 'Order 1001 shipped.' });
    expect(s.bubbles).toEqual([]);
    expect(s.unread).toBe(0);
    s = frames(s, { type: 'typing', on: false }, { type: 'message', id: 'r1', role: 'assistant', text: 'Order 1001 shipped.', at: 5 });
    expect(s.streaming).toBeUndefined();
    expect(s.bubbles.map((b) => [b.id, b.text])).toEqual([['r1', 'Order 1001 shipped.']]);
    expect(s.unread).toBe(1);
  });

  it('a reset empties the reply; text after it starts over', () => {
    let s = frames(initialState, ready, { type: 'delta', id: 'r1', text: 'Let me check' });
    s = frames(s, { type: 'delta', id: 'r1', text: '', reset: true });
    expect(s.streaming).toBeUndefined();
    s = frames(s, { type: 'delta', id: 'r1', text: 'It shipped' });
    expect(s.streaming).toEqual({ id: 'r1', text: 'It shipped' });
    s = frames(s, { type: 'delta', id: 'r1', text: 'Caught up: it shipped', reset: true });
    expect(s.streaming).toEqual({ id: 'r1', text: 'Caught up: it shipped' });
  });

  it('ready drops a half-written reply (the server catches up after it); a delta for a reply already shown whole is ignored', () => {
    let s = frames(initialState, ready, { type: 'delta', id: 'r1', text: 'Half of' });
    s = frames(s, { ...ready, history: [{ id: 'r0', role: 'assistant', text: 'earlier', at: 1 }] } as WidgetServerFrame);
    expect(s.streaming).toBeUndefined();
    s = frames(s, { type: 'delta', id: 'r0', text: 'late piece' });
    expect(s.streaming).toBeUndefined();
  });

  it('a final message for another reply leaves the one being written alone', () => {
    const s = frames(
      initialState,
      ready,
      { type: 'delta', id: 'r2', text: 'Writing' },
      { type: 'message', id: 'p1', role: 'assistant', text: 'Update', at: 3, proactive: true },
    );
    expect(s.streaming).toEqual({ id: 'r2', text: 'Writing' });
  });
});
