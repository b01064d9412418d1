// A widget's `ack` never trails the reply to the message it acknowledges: the ack leaves through the web channel's
// sink with the write that stores the message, ahead of the outputs of that write (no extra event-loop turn). The
// case that needs it: a message that arrives while a write is in flight waits for the next one, and a fast turn (the
// offline model answers at once) puts its reply in that same write.
import { afterEach, describe, expect, it } from 'vitest';
import { holdNextWrite } from '../support/held-write.ts';
import { startParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('acknowledgements and replies', () => {
  it('a message and its reply stored by one write: its ack reaches the widget first; every ack before its reply', async () => {
    const p = await startParley({ config: { llm: { provider: 'offline' } } });
    open.push(p);
    const w = await startWidgetSession(p.url(), { customerId: 'ack-1', email: 'a@example.com' });
    open.push(w);
    const conversationId = 'conv_web_ack-1';
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.id === `${conversationId}:m1:r`);
    // The next write waits (as a flush would): the messages sent meanwhile, and the replies of their fast turns, are
    // carried by the write after it.
    const hold = holdNextWrite(p.services.store);
    try {
      w.send({ type: 'message', id: 'm2', text: 'second' });
      await hold.begun();
      w.send({ type: 'message', id: 'm3', text: 'third' });
      // Both turns ran while the write was held: their text went out live (deltas are never stored).
      await w.next((f) => f.type === 'delta' && f.id === `${conversationId}:m3:r`);
    } finally {
      hold.release();
    }
    await w.next((f) => f.type === 'message' && f.id === `${conversationId}:m3:r`);
    const writes = hold.writes();
    hold.restore();
    // m3 and both replies were stored by the write after the held one.
    expect(writes).toBeGreaterThanOrEqual(2);
    const order = w.frames.map((f) => (f.type === 'ack' ? `ack:${f.id}` : f.type === 'message' ? `reply:${String(f.id).split(':')[1]}` : '')).filter(Boolean);
    for (const id of ['m1', 'm2', 'm3']) {
      expect(order.indexOf(`ack:${id}`), order.join(' ')).toBeGreaterThanOrEqual(0);
      expect(order.indexOf(`ack:${id}`), order.join(' ')).toBeLessThan(order.indexOf(`reply:${id}`));
    }
  });
});
