// Virtual actors: an idle conversation is passivated after session.idle_minutes
// and comes back from its snapshot on the next message.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { startParley } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('passivation', () => {
  it('passivates idle conversations and reactivates them from LMDB', async () => {
    const clock = createManualClock(Date.now());
    const p = await startParley({ clock, config: { session: { idle_minutes: 15 } } });
    open.push(p);
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'idle-1', email: 'i@example.com' });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message');
    const conversations = async () => (await (await fetch(`${p.url()}/diagnostics`)).json()).actors.list.filter((a: { machine: string }) => a.machine === 'conversation');
    expect(await conversations()).toEqual([expect.objectContaining({ id: 'conv_web_idle-1', state: 'idle' })]);
    clock.advance(14 * 60_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(p.runtime.host.activeCount()).toBe(1);
    clock.advance(2 * 60_000);
    for (let i = 0; i < 50 && p.runtime.host.activeCount() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(p.runtime.host.activeCount()).toBe(0);
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
});
