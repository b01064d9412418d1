// The backend hears when nobody took a handed-over conversation: `onHandoff` gets `phase: 'offline'` (with `since`)
// when no agent wrote within `handoff.offline_after_minutes`, once per handoff, between `requested` and `released`.
// Live like the other handoff frames: an SDK that connects later does not get it. Real server and store (LMDB; the
// postgres project runs it on PostgreSQL), the real SDK and a widget over real sockets, the offline LLM (it hands over
// when asked for a person). Time is the injected clock, frozen: it moves only when the test moves it.
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type HandoffNotice, type ParleyClient } from '../../sdk/src/index.ts';
import { frozenClock } from '../support/frozen-clock.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const MIN = 60_000;

/** Waits for `check` (generous deadline: the machine is busy). */
async function until(check: () => boolean, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A backend on the SDK socket that keeps every handoff notice it gets. */
async function backend(p: TestParley): Promise<{ client: ParleyClient; heard: HandoffNotice[] }> {
  const heard: HandoffNotice[] = [];
  const client = createClient().onHandoff((n) => void heard.push(n));
  await client.listen({ url: p.url(), secret: TEST_SECRET });
  open.push(client);
  return { client, heard };
}

const phases = (heard: HandoffNotice[]) => heard.map((n) => n.phase);

describe('the backend hears when nobody took a handed-over conversation', () => {
  it('requested, then offline once (with since) when no agent wrote in time, then released; a later handoff has its own; an SDK connected later gets no stale one', async () => {
    const t0 = Date.UTC(2026, 2, 25, 9, 0);
    const clock = frozenClock(t0);
    const p = await startParley({ clock, config: { handoff: { offline_after_minutes: 10 } } });
    open.push(p);
    const early = await backend(p);

    const w = await startWidgetSession(p.url(), { customerId: 'cust-off', email: 'cust-off@example.com' });
    open.push(w);
    w.send({ type: 'message', id: 'm1', text: 'I want to talk to a person' });
    await until(() => early.heard.length === 1, 'requested');
    const ids = { conversationId: 'conv_web_cust-off', customerId: 'cust-off', externalId: 'anon:cust-off', channel: 'web' };
    expect(early.heard[0]).toMatchObject({ ...ids, phase: 'requested', source: 'model', at: t0 });

    // Connected after the handoff, before nobody answered in time.
    const between = await backend(p);
    clock.move(10 * MIN);
    expect(await w.next((f) => f.type === 'handoff_notice' && f.kind === 'offline')).toMatchObject({ kind: 'offline' });
    const heardOffline = (b: { heard: HandoffNotice[] }) => b.heard.some((n) => n.phase === 'offline');
    await until(() => heardOffline(early) && heardOffline(between), 'offline on both connections');
    const offline = { ...ids, phase: 'offline', since: t0, at: t0 + 10 * MIN };
    expect(early.heard[1]).toEqual(offline);
    expect(between.heard).toEqual([offline]);

    // Connected after it: nothing stale. Much later, still nothing more (once per handoff), until an agent releases.
    const late = await backend(p);
    clock.move(60 * MIN);
    expect(await early.client.conversations.release(ids.conversationId)).toEqual({ conversationId: ids.conversationId, state: 'idle' });
    await until(() => [early, between, late].every((b) => b.heard.some((n) => n.phase === 'released')), 'released on every connection');
    expect(phases(early.heard)).toEqual(['requested', 'offline', 'released']);
    expect(phases(between.heard)).toEqual(['offline', 'released']);
    expect(late.heard).toEqual([{ ...ids, phase: 'released', by: 'agent', at: t0 + 70 * MIN }]);

    // Handed over again: that handoff gets its own offline notice, with its own since.
    const t1 = clock.now();
    await early.client.conversations.handoff(ids.conversationId, 'VIP');
    clock.move(10 * MIN);
    await until(() => late.heard.filter((n) => n.phase === 'offline').length === 1, 'the second handoff and its offline notice');
    expect(late.heard.slice(1)).toEqual([
      { ...ids, phase: 'requested', source: 'api', reason: 'VIP', at: t1 },
      { ...ids, phase: 'offline', since: t1, at: t1 + 10 * MIN },
    ]);
    expect(phases(early.heard)).toEqual(['requested', 'offline', 'released', 'requested', 'offline']);
  });
});
