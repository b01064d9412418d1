// Virtual actors: an idle conversation is passivated after session.idle_minutes
// and comes back from its snapshot on the next message.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { startParley, TEST_SECRET } from '../support/parley.ts';
import { connectWidget, startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('passivation', () => {
  it('passivates idle conversations and reactivates them from LMDB', async () => {
    const clock = createManualClock(Date.now());
    const p = await startParley({ clock, config: { session: { idle_minutes: 15 } } });
    open.push(p);
    const w = await startWidgetSession(p.url(), { customerId: 'idle-1', email: 'i@example.com' });
    open.push(w);
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message');
    const conversations = async () =>
      (await (await fetch(`${p.url()}/diagnostics`)).json()).actors.list.filter((a: { machine: string }) => a.machine === 'conversation');
    expect(await conversations()).toEqual([expect.objectContaining({ id: 'conv_web_idle-1', state: 'idle' })]);
    clock.advance(14 * 60_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(p.runtime.host.activeCount()).toBe(1);
    clock.advance(2 * 60_000);
    await expect.poll(() => p.runtime.host.activeCount(), { timeout: 15_000 }).toBe(0);
    expect(await conversations()).toEqual([]);
    w.send({ type: 'message', id: 'm2', text: 'hello again' });
    await w.next((f) => f.type === 'message');
    expect(p.runtime.host.activeCount()).toBe(1);
    const w2 = await connectWidget(p.url());
    open.push(w2);
    w2.send({ type: 'init', customerId: 'idle-1', email: 'i@example.com' });
    const ready = await w2.next((f) => f.type === 'ready');
    expect(ready.history.map((h: { role: string }) => h.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('a message that arrives while the conversation is being passivated is answered (the actor is not stopped under it)', async () => {
    const p = await startParley();
    open.push(p);
    // The tool takes a while, so the turn is still running when passivation's write returns.
    const sdk = createClient();
    sdk.expose(
      'getOrderStatus',
      { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
      async ({ orderId }: { orderId: string }) => {
        await new Promise((r) => setTimeout(r, 200));
        return { orderId, status: 'shipped' };
      },
    );
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    const w = await startWidgetSession(p.url(), { customerId: 'race-1', email: 'r@example.com' });
    open.push(w);
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message');
    const host = p.runtime.host;
    // Passivation awaits the actor's last write; the message is acknowledged during that await.
    const passivating = host.passivate(['conv_web_race-1']);
    const received = host.receive({ customerId: 'race-1', externalId: 'race-1' }, 'web', { messageId: 'm2', text: 'what is the status of order 1001?' });
    await Promise.all([passivating, received]);
    const reply = await w.next((f) => f.type === 'message', 15_000);
    expect(reply.text).toContain('shipped');
    const record = (await p.runtime.host.record('conv_web_race-1')) as { snapshot: { status: string }; busy: boolean };
    expect(record.snapshot.status).toBe('active');
    expect(record.busy).toBe(false);
  });
});
