// A node that loses its cluster lease stops every actor at once (host.relinquishAll), and a customer message still
// waiting for its write is refused. Losing the lease is the database's doing (it could not be renewed), not the
// request's: the message is refused as the store's unavailability — the widget gets `unavailable`, the log no error
// line with a stack — as when the claim itself is refused for want of membership.
import { afterEach, describe, expect, it } from 'vitest';
import { holdNextWrite } from '../support/held-write.ts';
import { startParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('a lost cluster lease', () => {
  it('a message waiting for the next write is refused as unavailable, and nothing is logged as an error', async () => {
    const p = await startParley({ config: { llm: { provider: 'offline' } } });
    open.push(p);
    const w = await startWidgetSession(p.url(), { customerId: 'lease-1', email: 'l@example.com' });
    open.push(w);
    // The write carrying m1 is held in flight, so m2 waits for the write after it.
    const hold = holdNextWrite(p.services.store);
    try {
      w.send({ type: 'message', id: 'm1', text: 'first' });
      await hold.begun();
      w.send({ type: 'message', id: 'm2', text: 'second' });
      // m2's turn runs (its text goes out live) only once m2 waits among what the next write carries.
      await w.next((f) => f.type === 'delta' && f.id === 'conv_web_lease-1:m2:r', 30_000);
      p.runtime.host.relinquishAll();
      const refused = await w.next((f) => f.type === 'error' && f.id === 'm2', 30_000);
      expect(refused.code).toBe('unavailable');
    } finally {
      hold.restore();
    }
    const errors = p.logs.filter((l) => /"level":(50|60)/.test(l));
    expect(errors, errors.join('\n')).toEqual([]);
  });
});
