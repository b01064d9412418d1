// Issue 33 part 1: every refusal of a customer message names the message's client id, a rate-limited one says how
// long to wait, and a refused message sent again with the same id (after the wait) is stored once. Real server, real
// socket, both engines.
import { afterEach, describe, expect, it } from 'vitest';
import { conversationIdFor } from '../../src/conversations/history.ts';
import { startParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('widget refusals name the message', () => {
  it('too_long, bad_frame and rate_limited (with retryAfterMs) carry the id; a re-send after the wait is stored once', async () => {
    // 6 a minute: a burst of 5, then one every 10 s.
    const p = await startParley({ config: { llm: { provider: 'offline' }, channels: { web: { rate_limit_per_minute: 6 } } } });
    open.push(p);
    const w = await startWidgetSession(p.url(), { customerId: 'cust-r', email: 'cust-r@example.com' });
    open.push(w);

    w.send({ type: 'message', id: 'long-1', text: 'x'.repeat(4001) });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'too_long', id: 'long-1' });
    w.send({ type: 'message', id: 'bad-1', text: 42 });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'bad_frame', id: 'bad-1' });

    for (let i = 1; i <= 5; i++) w.send({ type: 'message', id: `m${i}`, text: `line ${i}` });
    for (let i = 1; i <= 5; i++) await w.next((f) => f.type === 'ack' && f.id === `m${i}`);
    w.send({ type: 'message', id: 'm6', text: 'line 6' });
    const limited = await w.next((f) => f.type === 'error');
    expect(limited).toMatchObject({ code: 'rate_limited', id: 'm6' });
    expect(limited.retryAfterMs).toBeGreaterThan(0);
    expect(limited.retryAfterMs).toBeLessThanOrEqual(10_000);

    // Sent again with the same id until the limiter takes it (it refills on the real clock: a condition with a generous
    // deadline, not a fixed sleep); stored once, and the too-long text never.
    const deadline = Date.now() + 30_000;
    let acked = false;
    while (!acked && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(limited.retryAfterMs, 2_000)));
      w.send({ type: 'message', id: 'm6', text: 'line 6' });
      const answer = await w.next((f) => (f.type === 'ack' && f.id === 'm6') || (f.type === 'error' && f.id === 'm6'));
      acked = answer.type === 'ack';
    }
    expect(acked).toBe(true);
    const stored = (await historyOf(p.services.store, conversationIdFor('cust-r', 'web'))).filter((r) => r.role === 'user').map((r) => r.text);
    expect(stored.filter((t) => t === 'line 6')).toHaveLength(1);
    expect(stored.filter((t) => t?.startsWith('x'))).toHaveLength(0);
  }, 60_000);
});
