// The widget's socket and re-send logic, against a fake WebSocket and fake timers.
import { describe, expect, it, vi } from 'vitest';
import { connect } from '../../widget/src/connection.ts';
import { createController, NOT_SENT } from '../../widget/src/controller.ts';
import type { Status } from '../../widget/src/state.ts';
import { fakeSockets, useWidgetFakes, widgetReady as ready } from '../support/widget-socket.ts';

const sockets = fakeSockets();
const latest = sockets.latest;
const opts = { WebSocketImpl: sockets.WebSocketImpl, setTimer: (fn: () => void, ms: number) => setTimeout(fn, ms) };

useWidgetFakes(sockets);

describe('widget connection', () => {
  it('sends init on open, reports Connected on ready, Reconnecting on a drop, and backs off 0.5 s, 1 s, 2 s', () => {
    const statuses: Status[] = [];
    connect({
      url: 'ws://x/widget/ws',
      init: () => ({ type: 'init', customerId: 'c1', authToken: 't' }),
      onFrame: () => {},
      onStatus: (s) => statuses.push(s),
      onReady: () => {},
      ...opts,
    });
    expect(statuses).toEqual(['Connecting']);
    latest().accept();
    expect(latest().sent).toEqual([{ type: 'init', customerId: 'c1', authToken: 't' }]);
    latest().push(ready());
    expect(statuses.at(-1)).toBe('Connected');

    latest().drop();
    expect(statuses.at(-1)).toBe('Reconnecting');
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = sockets.all.length;
      let waited = 0;
      while (sockets.all.length === before) {
        vi.advanceTimersByTime(50);
        waited += 50;
      }
      delays.push(waited);
      latest().drop(); // the server is still down
    }
    expect(delays).toEqual([500, 1000, 2000]);
    // once a ready comes back, the next drop starts again at 0.5 s
    vi.advanceTimersByTime(4000);
    latest().accept();
    latest().push(ready());
    expect(statuses.at(-1)).toBe('Connected');
    const before = sockets.all.length;
    latest().drop();
    vi.advanceTimersByTime(499);
    expect(sockets.all.length).toBe(before);
    vi.advanceTimersByTime(1);
    expect(sockets.all.length).toBe(before + 1);
  });

  it('stops on a fatal error (unauthorized): Disconnected, no retry', () => {
    const statuses: Status[] = [];
    connect({
      url: 'ws://x',
      init: () => ({ type: 'init', customerId: 'c1', authToken: 'bad' }),
      onFrame: () => {},
      onStatus: (s) => statuses.push(s),
      onReady: () => {},
      ...opts,
    });
    latest().accept();
    latest().push({ type: 'error', code: 'unauthorized', message: 'no' });
    latest().drop();
    vi.advanceTimersByTime(60_000);
    expect(sockets.all).toHaveLength(1);
    expect(statuses.at(-1)).toBe('Disconnected');
  });
});

describe('widget controller', () => {
  const make = () => {
    let n = 0;
    return createController({
      url: 'ws://x',
      init: () => ({ type: 'init', customerId: 'c1', authToken: 't' }),
      render: () => {},
      newId: () => `m${++n}`,
      now: () => 1,
      ...opts,
    });
  };

  it('re-sends an unacknowledged message with the same id after reconnecting, and only that one', () => {
    const c = make();
    latest().accept();
    latest().push(ready());
    c.send('first');
    latest().push({ type: 'ack', id: 'm1' });
    c.send('where is my order?');
    expect(latest().sent.filter((f) => f.type === 'message')).toEqual([
      { type: 'message', id: 'm1', text: 'first' },
      { type: 'message', id: 'm2', text: 'where is my order?' },
    ]);
    latest().drop(); // m2 was never acknowledged
    expect(c.state().status).toBe('Reconnecting');
    c.send('sent while offline');
    vi.advanceTimersByTime(500);
    const second = latest();
    second.accept();
    expect(second.sent).toEqual([{ type: 'init', customerId: 'c1', authToken: 't' }]); // nothing before ready
    second.push(ready([{ id: 'm1', role: 'user', text: 'first', at: 1 }]));
    expect(second.sent.slice(1)).toEqual([
      { type: 'message', id: 'm2', text: 'where is my order?' },
      { type: 'message', id: 'm3', text: 'sent while offline' },
    ]);
    expect(c.state().status).toBe('Connected');
    expect(c.state().bubbles.map((b) => b.id)).toEqual(['m1', 'm2', 'm3']);
  });

  it('an answer while disconnected is not dropped silently; ready clears a shown prompt', () => {
    const c = make();
    latest().accept();
    latest().push(ready());
    latest().push({ type: 'confirm', id: 'k1', name: 'cancelOrder', args: {}, summary: 'Cancel order 1001' });
    latest().drop();
    expect(c.answer('k1', true)).toBe(false);
    expect(c.state().error).toEqual({ code: NOT_SENT });
    expect(c.state().bubbles.find((b) => b.id === 'k1')?.outcome).toBeUndefined();
    vi.advanceTimersByTime(500);
    latest().accept();
    latest().push(ready());
    expect(c.state().confirm).toBeUndefined();
    expect(c.state().error).toBeUndefined();
    latest().push({ type: 'confirm', id: 'k1', name: 'cancelOrder', args: {}, summary: 'Cancel order 1001' });
    expect(c.answer('k1', true)).toBe(true);
    expect(latest().sent.at(-1)).toEqual({ type: 'confirm', id: 'k1', approve: true });
    expect(c.state().bubbles.find((b) => b.id === 'k1')?.outcome).toBe('approved');
  });

  it('counts assistant messages that arrive while the panel is closed; opening clears them', () => {
    const c = make();
    latest().accept();
    latest().push(ready([{ id: 'h1', role: 'assistant', text: 'old', at: 0 }]));
    expect(c.state().unread).toBe(0);
    latest().push({ type: 'message', id: 'p1', role: 'assistant', text: 'Your order shipped', at: 2, proactive: true });
    latest().push({ type: 'message', id: 'p2', role: 'assistant', text: 'Again', at: 3 });
    expect(c.state().unread).toBe(2);
    c.panel(true);
    expect(c.state().unread).toBe(0);
    latest().push({ type: 'message', id: 'p3', role: 'assistant', text: 'While open', at: 4 });
    expect(c.state().unread).toBe(0);
  });

  it('a refused session token asks onAuthExpired once for a fresh one and connects again, without a reload', async () => {
    let token = 'old';
    let asked = 0;
    const lines: string[] = [];
    const c = createController({
      url: 'ws://x',
      init: () => ({ type: 'init', customerId: 'c1', authToken: token }),
      render: () => {},
      newId: () => 'm1',
      refreshAuth: async () => {
        asked++;
        token = 'fresh';
        return true;
      },
      log: (line) => lines.push(line),
      ...opts,
    });
    const flush = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    latest().accept();
    latest().push({ type: 'error', code: 'unauthorized', message: 'Session token refused (expired)' });
    latest().drop();
    await flush();
    expect(asked).toBe(1);
    expect(sockets.all).toHaveLength(2);
    latest().accept();
    expect(latest().sent[0]).toEqual({ type: 'init', customerId: 'c1', authToken: 'fresh' });
    // the code and the server's words go to the console, not to the customer
    expect(lines).toEqual(['[parley] unauthorized: Session token refused (expired)']);
    expect(c.state().error).toBeUndefined();
    // the fresh token refused too, before any ready: the session has ended (no loop)
    latest().push({ type: 'error', code: 'unauthorized', message: 'Session token refused (bad_signature)' });
    latest().drop();
    await flush();
    vi.advanceTimersByTime(60_000);
    expect(asked).toBe(1);
    expect(sockets.all).toHaveLength(2);
    expect(c.state()).toMatchObject({ status: 'Disconnected', reason: 'auth' });
  });

  it('without a fresh token the session ends: Disconnected for reason auth', async () => {
    const c = createController({
      url: 'ws://x',
      init: () => ({ type: 'init', customerId: 'c1', authToken: 'old' }),
      render: () => {},
      newId: () => 'm1',
      refreshAuth: async () => false,
      log: () => {},
      ...opts,
    });
    latest().accept();
    latest().push({ type: 'error', code: 'unauthorized', message: 'expired' });
    latest().drop();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(c.state()).toMatchObject({ status: 'Disconnected', reason: 'auth' });
    expect(sockets.all).toHaveLength(1);
  });
});
