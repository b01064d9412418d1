// Issue 34, part 2: webhook records do not grow without end. Delivered events' ids (the de-duplication record) and
// dead letters are pruned after `webhooks.keep_days` on an hourly timer of the injected clock; a dead letter keeps ids
// and metadata, never the customer's text; and a receiver that answers 500 forever, soaked through days of simulated
// time at the default retry policy, leaves the store's count flat once the retry window and keep_days are reached.
import { afterEach, describe, expect, it } from 'vitest';
import { createClock } from '../../src/clock.ts';
import type { WebhookJob } from '../../src/webhooks/delivery.ts';
import { startBadReceiver } from '../support/bad-receiver.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const SECRET = 'hook-secret-0123456789abcdef';
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(20);
  }
}

const counts = (p: TestParley) => p.services.store.jobs.counts('webhooks');
const total = async (p: TestParley) => {
  const c = await counts(p);
  return c.queued + c.dead + c.keptIds;
};
/** Nothing due is left unattempted: every stored delivery waits for a later time. */
const settled = async (p: TestParley) => (await p.services.store.jobs.pending('webhooks')).every((j) => j.runAt > p.services.clock.now());

describe('webhook records are pruned', () => {
  it('delivered ids and dead letters go after keep_days (hourly, injected clock); a dead letter never keeps the customer’s text', async () => {
    const good = await startWebhookReceiver({ secret: SECRET });
    open.push(good);
    const bad = await startBadReceiver({ secret: SECRET, behaviour: { mode: 'status', status: 500 }, toleranceSeconds: 10 * 86_400 });
    open.push(bad);
    const clock = createClock();
    const p = await startParley({
      clock,
      config: {
        webhooks_retry_hours: 0.0003, // about a second of retries
        webhooks_retry_base_ms: 100,
        webhooks: {
          allow_private: true,
          keep_days: 1,
          endpoints: [
            { url: good.url, secret: SECRET },
            { url: bad.url, secret: SECRET },
          ],
        },
      },
    });
    open.push(p);
    for (const text of ['my card number is 4111 1111', 'second message']) {
      await p.runtime.webhooks.emit({ type: 'message.customer', createdAt: clock.now(), data: { conversationId: 'conv_r', messageId: 'm', text } });
    }
    await until('2 delivered, 2 dead', async () => JSON.stringify(await counts(p)) === JSON.stringify({ queued: 0, dead: 2, keptIds: 4 }));
    const dead = await p.services.store.jobs.deadLetters<WebhookJob>('webhooks', 10);
    expect(dead.map((d) => d.payload.event.data)).toEqual([
      { conversationId: 'conv_r', messageId: 'm' },
      { conversationId: 'conv_r', messageId: 'm' },
    ]);
    // The text itself, not its digits alone: '4111' also turns up by chance in a record's times, ids and port.
    expect(JSON.stringify(dead)).not.toContain('card number');
    expect(JSON.stringify(dead)).not.toContain('4111 1111');
    // The API's counts are totals, not the page's.
    const page = (await (await fetch(`${p.url()}/api/v1/webhooks/deliveries?limit=1`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).json()) as {
      counts: { dead: number; retrying: number };
      dead: unknown[];
    };
    expect(page.dead).toHaveLength(1);
    expect(page.counts).toMatchObject({ dead: 2, retrying: 0 });
    // Nearly a day later the hourly prune keeps them; a day and an hour later they are gone.
    clock.setOffset(DAY - 2 * HOUR);
    await pause(200);
    expect(await counts(p)).toEqual({ queued: 0, dead: 2, keptIds: 4 });
    clock.setOffset(DAY + HOUR + 1000);
    await until('pruned', async () => (await total(p)) === 0);
    // The prune's commit can be seen just before its log line is written.
    await until('the prune logged', async () => p.logs.join('').includes('webhook records pruned'));
  }, 60_000);

  it('soak: a receiver answering 500 forever, at the default retry policy, leaves the store’s count flat once the retry window and keep_days are reached', async () => {
    const bad = await startBadReceiver({ secret: SECRET, behaviour: { mode: 'status', status: 500 }, toleranceSeconds: 10 * 86_400 });
    open.push(bad);
    const clock = createClock();
    // Defaults: 24 h of retries from 5 s doubling to an hour. Keep dead letters and ids half a day.
    const p = await startParley({ clock, config: { webhooks: { allow_private: true, keep_days: 0.5, endpoints: [{ url: bad.url, secret: SECRET }] } } });
    open.push(p);
    const sizes: number[] = [];
    const STEPS = 60; // hours of simulated time: an event each hour
    for (let h = 1; h <= STEPS; h++) {
      await p.runtime.webhooks.emit({ type: 'message.customer', createdAt: clock.now(), data: { conversationId: 'conv_s', text: `hour ${h}` } });
      clock.setOffset(h * HOUR);
      await until(`hour ${h} attempted`, () => settled(p));
      sizes.push(await total(p));
    }
    // Each stored event is retried for 24 h (≈24 queued), then dead and kept half a day (≈12 dead letters and 12
    // ids). Without pruning the dead letters and ids grow by 2 an hour: +30 over the last 15 hours.
    const last = sizes.slice(-15);
    expect(Math.max(...last) - Math.min(...last), `store sizes by hour: ${sizes.join(' ')}`).toBeLessThanOrEqual(4);
    expect(Math.max(...last), `store sizes by hour: ${sizes.join(' ')}`).toBeLessThanOrEqual(24 + 2 * 12 + 6);
    expect(bad.requests.length).toBeGreaterThan(STEPS);
  }, 120_000);
});
