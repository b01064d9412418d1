// Issue 33 part 1: every customer message ends sent or visibly not sent. The state logic (refusals tied to bubbles),
// the controller's re-sends (rate limit waits, one at a time, oldest first), the outbox kept across a reload, and
// the socket that reconnects at once when the browser comes back online — against a fake WebSocket and fake timers.
import { describe, expect, it, vi } from 'vitest';
import { connect } from '../../widget/src/connection.ts';
import { createController } from '../../widget/src/controller.ts';
import { initialState, nextRateLimited, reduce, toResend, type WidgetState } from '../../widget/src/state.ts';
import { fakeSockets, type FakeSocket, useWidgetFakes, widgetReady as ready } from '../support/widget-socket.ts';

const sockets = fakeSockets();
const latest = sockets.latest;
const messagesSent = (s: FakeSocket) => s.sent.filter((f) => f.type === 'message').map((f) => f.id);

class MemoryStorage {
  items = new Map<string, string>();
  getItem = (k: string) => this.items.get(k) ?? null;
  setItem = (k: string, v: string) => void this.items.set(k, v);
  removeItem = (k: string) => void this.items.delete(k);
}

useWidgetFakes(sockets, { now: 1_000_000 });

describe('widget message states', () => {
  it('a refusal that names a message marks that bubble not sent; a rate limit says when it goes again', () => {
    let s: WidgetState = reduce(initialState, { type: 'sent', id: 'm1', text: 'order 1002', at: 10 });
    s = reduce(s, { type: 'sent', id: 'm2', text: 'thanks!', at: 11 });
    s = reduce(s, { type: 'frame', frame: { type: 'error', code: 'rate_limited', message: 'slow down', id: 'm2', retryAfterMs: 2000 }, at: 100 });
    expect(s.bubbles[1]).toMatchObject({ id: 'm2', delivered: false, failed: { code: 'rate_limited', retryAt: 2100 } });
    expect(s.bubbles[0].failed).toBeUndefined();
    expect(s.error).toBeUndefined(); // the bubble says it, not a banner
    expect(nextRateLimited(s)).toEqual({ id: 'm2', text: 'thanks!', at: 2100 });
    s = reduce(s, { type: 'frame', frame: { type: 'error', code: 'too_long', message: 'long', id: 'm1' }, at: 100 });
    // a text the server refuses as such is not re-sent by itself after a reconnect; a rate-limited one is
    expect(toResend(s).map((b) => b.id)).toEqual(['m2']);
    s = reduce(s, { type: 'retry', id: 'm2' });
    expect(s.bubbles[1].failed).toBeUndefined();
    s = reduce(s, { type: 'frame', frame: { type: 'ack', id: 'm2' } });
    expect(s.bubbles[1]).toMatchObject({ delivered: true });
    // a refusal naming a message that is not (or no longer) waiting is an ordinary error
    s = reduce(s, { type: 'frame', frame: { type: 'error', code: 'unavailable', message: 'x', id: 'm2' } });
    expect(s.error).toEqual({ code: 'unavailable' });
  });

  it('restores kept messages the history does not hold, once', () => {
    let s = reduce(initialState, {
      type: 'frame',
      frame: { type: 'ready', customerId: 'c1', conversationId: 'x', history: [{ id: 'm1', role: 'user', text: 'a', at: 1 }] },
    });
    const messages = [
      { id: 'm1', text: 'a', at: 1 },
      { id: 'm2', text: 'b', at: 2 },
    ];
    s = reduce(s, { type: 'restore', messages });
    s = reduce(s, { type: 'restore', messages });
    expect(s.bubbles.map((b) => [b.id, b.delivered])).toEqual([
      ['m1', true],
      ['m2', false],
    ]);
  });
});

describe('widget re-sends', () => {
  const start = (storage = new MemoryStorage()) => {
    let n = 0;
    const c = createController({
      url: 'ws://x/widget/ws',
      init: () => ({ type: 'init', customerId: 'c1', authToken: 't' }),
      render: () => {},
      newId: () => `m${++n}`,
      WebSocketImpl: sockets.WebSocketImpl,
      setTimer: (fn, ms) => setTimeout(fn, ms),
      storage,
      log: () => {},
    });
    latest().accept();
    latest().push(ready());
    return c;
  };

  it('rate-limited messages go again by themselves after the wait, one at a time and oldest first', () => {
    const c = start();
    const s = latest();
    for (let i = 0; i < 3; i++) c.send(`line ${i + 1}`);
    expect(messagesSent(s)).toEqual(['m1', 'm2', 'm3']);
    s.push({ type: 'ack', id: 'm1' });
    s.push({ type: 'error', code: 'rate_limited', message: 'x', id: 'm2', retryAfterMs: 2000 });
    s.push({ type: 'error', code: 'rate_limited', message: 'x', id: 'm3', retryAfterMs: 2000 });
    expect(c.state().bubbles.map((b) => (b.delivered ? 'sent' : b.failed ? 'failed' : 'sending'))).toEqual(['sent', 'failed', 'failed']);
    vi.advanceTimersByTime(1999);
    expect(messagesSent(s)).toEqual(['m1', 'm2', 'm3']);
    vi.advanceTimersByTime(1);
    expect(messagesSent(s)).toEqual(['m1', 'm2', 'm3', 'm2']); // only the oldest
    expect(c.state().bubbles[1].failed).toBeUndefined(); // sending again
    s.push({ type: 'ack', id: 'm2' });
    expect(messagesSent(s)).toEqual(['m1', 'm2', 'm3', 'm2', 'm3']); // the next at once: its wait is over
    s.push({ type: 'error', code: 'rate_limited', message: 'x', id: 'm3', retryAfterMs: 500 });
    vi.advanceTimersByTime(500);
    expect(messagesSent(s)).toEqual(['m1', 'm2', 'm3', 'm2', 'm3', 'm3']);
    s.push({ type: 'ack', id: 'm3' });
    expect(c.state().bubbles.every((b) => b.delivered)).toBe(true);
  });

  it('Retry sends a refused message again at once', () => {
    const c = start();
    c.send('hello');
    latest().push({ type: 'error', code: 'unavailable', message: 'x', id: 'm1' });
    expect(c.state().bubbles[0].failed).toEqual({ code: 'unavailable' });
    c.retry('m1');
    expect(messagesSent(latest())).toEqual(['m1', 'm1']);
    expect(c.state().bubbles[0].failed).toBeUndefined();
  });

  it('keeps unacknowledged messages across a reload, per customer, until acknowledged', () => {
    const storage = new MemoryStorage();
    const first = start(storage);
    first.send('cancel 1001');
    first.send('thanks');
    latest().push({ type: 'ack', id: 'm1' });
    expect([...storage.items.values()].map((v) => JSON.parse(v).map((e: { id: string }) => e.id))).toEqual([['m2']]);
    first.close();

    // the reload: a new page, the same storage; the history holds m1 only
    sockets.all.length = 0;
    const second = start(storage);
    expect(second.state().bubbles.map((b) => b.text)).toEqual(['thanks']);
    expect(messagesSent(latest())).toEqual(['m2']); // re-sent with its own id
    latest().push({ type: 'ack', id: 'm2' });
    expect(storage.items.size).toBe(0);
  });
});

describe('widget reconnect on wake', () => {
  it('a socket waiting out its backoff connects at once on reconnectNow, and the old timer opens no second socket', () => {
    const conn = connect({
      url: 'ws://x',
      init: () => ({ type: 'init', customerId: 'c1', authToken: 't' }),
      onFrame: () => {},
      onStatus: () => {},
      onReady: () => {},
      WebSocketImpl: sockets.WebSocketImpl,
      setTimer: (fn, ms) => setTimeout(fn, ms),
    });
    latest().accept();
    latest().push(ready());
    for (let i = 0; i < 5; i++) {
      latest().drop(); // backoff grows to 16 s
      vi.advanceTimersByTime(30_000);
    }
    latest().drop();
    expect(sockets.all).toHaveLength(6);
    conn.reconnectNow();
    expect(sockets.all).toHaveLength(7);
    conn.reconnectNow(); // a socket is open: nothing
    expect(sockets.all).toHaveLength(7);
    vi.advanceTimersByTime(60_000);
    expect(sockets.all).toHaveLength(7);
  });
});
