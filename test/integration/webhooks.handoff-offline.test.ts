// The opt-in `handoff.offline` webhook event: when no agent wrote within `handoff.offline_after_minutes` of a handoff,
// an endpoint whose `events` names it gets it (once per handoff, with `since` and `waitedMinutes`); an endpoint with no
// filter and one listing only other events do not (their receivers may run an SDK that refuses an unknown type). Like
// every event it is stored with the conversation's write and delivered from the durable queue: a delivery refused
// when Parley stops is delivered, once, after the restart. Real server and store (LMDB; the postgres project runs it
// on PostgreSQL), a widget over a real socket, local receivers that verify every signature with the SDK's
// verifyWebhook. Time is the injected clock, frozen: it moves only when the test moves it.
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/src/index.ts';
import { createClock, type Clock } from '../../src/clock.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const MIN = 60_000;
const SECRET = 'hook-secret-0123456789abcdef';
const auth = { authorization: `Bearer ${TEST_SECRET}` };

/** A clock standing at `at` until the test moves it; timers fire when their time is reached. */
function frozenClock(at: number): Clock & { move(ms: number): void } {
  const clock = createClock(() => at);
  return Object.assign(clock, { move: (ms: number) => clock.setOffset(clock.offset() + ms) });
}

/** Waits for `check` (generous deadline: the machine is busy). */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const ofType = (r: WebhookReceiver, type: string) => r.received.filter((x) => x.event?.type === type);
/** The distinct events of a type answered 2xx, in order. Delivery is at least once: a receiver drops repeats by id
 * (moving the clock past a delivery's lease while it is in flight sends it again, with the same id). */
const deliveredOf = (r: WebhookReceiver, type: string) => [
  ...new Map(
    r
      .delivered()
      .filter((e) => e.type === type)
      .map((e) => [e.id, e]),
  ).values(),
];

/** Nothing is waiting in the webhook queue: every event stored so far has been delivered (or refused for good). */
async function queueEmpty(p: TestParley): Promise<boolean> {
  const view = (await (await fetch(`${p.url()}/api/v1/webhooks/deliveries`, { headers: auth })).json()) as { counts: { retrying: number } };
  return view.counts.retrying === 0;
}

describe('the opt-in handoff.offline webhook event', () => {
  it(
    'goes once per handoff, with since, only to an endpoint that lists it; a delivery pending at a restart is delivered once after it',
    { timeout: 120_000 },
    async () => {
      // Signatures carry the frozen clock's time: receivers accept it within a day of the real one.
      const t0 = Math.floor(Date.now() / MIN) * MIN;
      const clock = frozenClock(t0);
      let refuseOffline = true;
      const opted = await startWebhookReceiver({
        secret: SECRET,
        toleranceSeconds: 86_400,
        respond: (e) => (e.type === 'handoff.offline' && refuseOffline ? 503 : 200),
      });
      const unfiltered = await startWebhookReceiver({ secret: SECRET, toleranceSeconds: 86_400 });
      const others = await startWebhookReceiver({ secret: SECRET, toleranceSeconds: 86_400 });
      open.push(opted, unfiltered, others);
      const config = {
        handoff: { offline_after_minutes: 10 },
        webhooks_retry_base_ms: 200,
        webhooks: {
          allow_private: true,
          endpoints: [
            { url: opted.url, secret: SECRET, events: ['handoff.requested', 'handoff.offline'] },
            { url: unfiltered.url, secret: SECRET },
            { url: others.url, secret: SECRET, events: ['handoff.requested', 'handoff.released', 'message.customer'] },
          ],
        },
      };
      const first = await startParley({ clock, config });
      let p: TestParley = first;
      open.push({ close: () => p.close() });

      // Handed over by the model at t0; nobody writes.
      const w = await startWidgetSession(p.url(), { customerId: 'cust-whoff', email: 'cust-whoff@example.com' });
      open.push(w);
      w.send({ type: 'message', id: 'm1', text: 'I want to talk to a person' });
      await w.next((f) => f.type === 'status' && f.mode === 'human');
      const ids = { conversationId: 'conv_web_cust-whoff', customerId: 'cust-whoff', externalId: 'anon:cust-whoff', channel: 'web' };
      await until('handoff.requested everywhere', () => [opted, unfiltered, others].every((r) => deliveredOf(r, 'handoff.requested').length === 1));

      // Ten minutes later the customer is told no one is free yet; the opted-in receiver refuses that event for now.
      clock.move(10 * MIN);
      await w.next((f) => f.type === 'handoff_notice' && f.kind === 'offline');
      await until('a first attempt of handoff.offline', () => ofType(opted, 'handoff.offline').length >= 1);
      const offline = ofType(opted, 'handoff.offline')[0].event!;
      expect(offline).toEqual({
        id: expect.stringMatching(/^evt_/),
        type: 'handoff.offline',
        createdAt: t0 + 10 * MIN,
        data: { ...ids, since: t0, waitedMinutes: 10 },
      });

      // Parley stops with that delivery pending and comes back on the same data; the receiver takes it now.
      await first.close();
      refuseOffline = false;
      p = await startParley({ clock, config, storagePath: first.storagePath });
      clock.move(MIN); // past the retry's time
      await until('handoff.offline delivered after the restart', () => deliveredOf(opted, 'handoff.offline').length === 1);
      expect(ofType(opted, 'handoff.offline').every((r) => r.event!.id === offline.id)).toBe(true);

      // Much later: still one (once per handoff). Released, handed over again by the API, nobody writes: its own event.
      clock.move(60 * MIN);
      const sdk = createClient();
      await sdk.listen({ url: p.url(), secret: TEST_SECRET });
      open.push(sdk);
      await sdk.conversations.release(ids.conversationId);
      const t1 = clock.now();
      await sdk.conversations.handoff(ids.conversationId, 'VIP');
      await until('the second handoff.requested everywhere', () => [opted, unfiltered, others].every((r) => deliveredOf(r, 'handoff.requested').length === 2));
      clock.move(10 * MIN);
      await until('the second handoff.offline', () => deliveredOf(opted, 'handoff.offline').length === 2);
      await until('handoff.released to the endpoints that get it', () => [unfiltered, others].every((r) => deliveredOf(r, 'handoff.released').length === 1));
      await until('the webhook queue empty', () => queueEmpty(p));

      expect(opted.received.filter((r) => r.error)).toEqual([]);
      expect(deliveredOf(opted, 'handoff.offline')).toEqual([
        offline,
        { id: expect.stringMatching(/^evt_/), type: 'handoff.offline', createdAt: t1 + 10 * MIN, data: { ...ids, since: t1, waitedMinutes: 10 } },
      ]);
      expect(new Set(opted.received.map((r) => r.event!.type))).toEqual(new Set(['handoff.requested', 'handoff.offline']));
      // No filter: every other event, never the opt-in one. A filter without it: only what it lists.
      for (const r of [unfiltered, others]) {
        expect(r.received.filter((x) => x.error)).toEqual([]);
        expect(ofType(r, 'handoff.offline')).toEqual([]);
        expect(deliveredOf(r, 'handoff.requested')).toHaveLength(2);
      }
      expect(new Set(unfiltered.received.map((r) => r.event!.type))).toEqual(
        new Set(['message.customer', 'handoff.requested', 'handoff.released', 'conversation.outcome']),
      );
      expect(new Set(others.received.map((r) => r.event!.type))).toEqual(new Set(['message.customer', 'handoff.requested', 'handoff.released']));
    },
  );
});
