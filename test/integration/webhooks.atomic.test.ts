// Issue 19: an outbound webhook event is stored in the same transaction as the fact it reports, so a crash right after
// the fact commits cannot lose the event (at-least-once from the durable queue). Checked from outside the writes: a
// watcher reads, as often as the event loop lets it, every stored history record and then the webhook queue; a
// customer message or an accepted proactive send seen without its event (in a later read) is a fact whose event was
// stored afterwards, in a transaction of its own. The receiver never answers, so every event stays queued.
import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookJob } from '../../src/webhooks/delivery.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const CUSTOMER = 'cust-atomic';
const CONVERSATION = `conv_web_${CUSTOMER}`;
const MESSAGES = 25;

/** Facts stored without their event at the time of a look, as `<event type>:<message id>`. */
function watchFacts(p: TestParley) {
  const missing = new Set<string>();
  let looks = 0;
  let running = true;
  const look = async () => {
    const { store } = p.services;
    // History first: whatever it shows was committed before the queue is read, so an event written with it shows too.
    const records = (await store.history.page(CONVERSATION, { limit: 1000 })).map((r) => r.record);
    const events = (await store.jobs.pending<WebhookJob>('webhooks')).map((j) => j.payload.event);
    const has = (type: string, messageId: string) => events.some((e) => e.type === type && e.data.messageId === messageId);
    for (const r of records) {
      if (r.role === 'user' && !has('message.customer', r.id)) missing.add(`message.customer:${r.id}`);
      if (r.proactive && !has('proactive.accepted', r.id)) missing.add(`proactive.accepted:${r.id}`);
    }
    looks++;
  };
  const done = (async () => {
    while (running) {
      await look();
      await new Promise((r) => setImmediate(r));
    }
  })();
  return {
    missing,
    looks: () => looks,
    async stop() {
      if (!running) return;
      running = false;
      await done;
      await look();
    },
  };
}

describe('outbound webhook events are stored with their facts', () => {
  it('no customer message or accepted proactive send is ever stored without its event', async () => {
    const p = await startParley({
      config: {
        proactive: { enabled: true, daily_cap: 1000 },
        channels: { web: { rate_limit_per_minute: 1000 } },
        // Nothing listens there: deliveries fail and wait a minute, so every event stays in the queue.
        webhooks: { allow_private: true, endpoints: [{ url: 'http://127.0.0.1:9/hooks', secret: 'hook-secret-0123456789abcdef' }] },
        webhooks_retry_base_ms: 60_000,
      },
    });
    open.push(p);
    const w = await startWidgetSession(p.url(), { customerId: CUSTOMER, email: `${CUSTOMER}@example.com` });
    open.push({ close: () => w.close() });
    await fetch(`${p.url()}/proactive/opt-in`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customerExternalId: `anon:${CUSTOMER}`, optIn: true }),
    });
    const watcher = watchFacts(p);
    open.push({ close: () => watcher.stop() });
    const proactive: Promise<{ accepted: boolean }>[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      w.send({ type: 'message', id: `m${i}`, text: `question ${i}` });
      proactive.push(
        fetch(`${p.url()}/proactive`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
          body: JSON.stringify({ customerExternalId: `anon:${CUSTOMER}`, channel: 'web', content: `offer ${i}` }),
        }).then((r) => r.json() as Promise<{ accepted: boolean }>),
      );
      await w.next((f) => f.type === 'ack' && f.id === `m${i}`);
    }
    expect((await Promise.all(proactive)).filter((r) => !r.accepted)).toEqual([]);
    await watcher.stop();
    expect(watcher.looks()).toBeGreaterThan(MESSAGES);
    expect([...watcher.missing]).toEqual([]);
    // And every fact has exactly one event.
    const events = (await p.services.store.jobs.pending<WebhookJob>('webhooks')).map((j) => j.payload.event);
    expect(events.filter((e) => e.type === 'message.customer')).toHaveLength(MESSAGES);
    expect(events.filter((e) => e.type === 'proactive.accepted')).toHaveLength(MESSAGES);
  });
});
