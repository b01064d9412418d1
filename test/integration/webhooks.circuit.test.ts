// Issue 34, part 1: an endpoint's circuit, on a real Parley and a real receiver, with the injected clock moved by
// offsets (real time + offset: timers fire as the offset passes them). After failures in a row over 20 s the circuit
// opens: no connection is made while it is open; then one probe goes while the others wait; a failed probe opens it
// again (deliveries fail at once, `(circuit open)`, on their own schedule); a successful one closes it and everything
// is delivered.
import { afterEach, describe, expect, it } from 'vitest';
import { createClock } from '../../src/clock.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const SECRET = 'hook-secret-0123456789abcdef';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(20);
  }
}

/** Every stored delivery waits for a later time: nothing due is left unattempted, nothing is in flight. */
const settled = async (p: TestParley) => (await p.services.store.jobs.pending('webhooks')).every((j) => j.runAt > p.services.clock.now());

describe('an endpoint’s circuit', () => {
  it('opens after failures in a row over 20 s, sends one probe when its cool-down is over, reopens on failure, closes on success', async () => {
    let status = 500;
    const receiver = await startWebhookReceiver({ secret: SECRET, respond: () => status });
    open.push(receiver);
    const clock = createClock();
    // The first cool-down is max(1 s, webhooks_retry_base_ms): 30 s here; retries wait 15–30 s, then 30–60 s, …
    const p = await startParley({
      clock,
      config: { webhooks_retry_base_ms: 30_000, webhooks: { allow_private: true, endpoints: [{ url: receiver.url, secret: SECRET }] } },
    });
    open.push(p);
    const emit = (n: number) => p.runtime.webhooks.emit({ type: 'message.customer', createdAt: clock.now(), data: { n } });
    const EVENTS = 6;
    for (let i = 0; i < EVENTS; i++) await emit(i);
    await until('the first attempts', () => receiver.received.length === EVENTS);
    await until('settled', () => settled(p));

    // 61 s later every event is due again: failures in a row, now over more than 20 s: the circuit opens.
    clock.setOffset(61_000);
    await until('more attempts', () => receiver.received.length > EVENTS);
    await until('settled', () => settled(p));
    const whenOpened = receiver.received.length;

    // While it is open (30 s), a new event fails at once: no connection reaches the receiver.
    await emit(100);
    await until('settled', () => settled(p));
    await pause(300);
    expect(receiver.received).toHaveLength(whenOpened);
    const lastErrors = async () =>
      (
        (await (await fetch(`${p.url()}/api/v1/webhooks/deliveries`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).json()) as {
          retrying: { lastError?: string }[];
        }
      ).retrying.map((r) => r.lastError);
    expect(await lastErrors()).toContain('failing (circuit open)');

    // Another 61 s: the cool-down is over and deliveries are due: exactly one probe reaches the receiver, the others
    // wait for its answer; it fails, the circuit opens again (60 s) and they fail at once.
    clock.setOffset(122_000);
    await until('settled', () => settled(p));
    await pause(300);
    expect(receiver.received).toHaveLength(whenOpened + 1);
    expect((await lastErrors()).filter((e) => e === 'HTTP 500 (circuit open)').length).toBeGreaterThan(0);

    // The receiver recovers. Once the second cool-down (60 s) is over, the next delivery is a probe that succeeds,
    // the circuit closes, and a new event goes at once.
    status = 200;
    clock.setOffset(122_000 + 61_000);
    await emit(200);
    await until('the new event delivered', () => receiver.delivered().some((e) => e.data.n === 200));
    await emit(201);
    await until('the next one too', () => receiver.delivered().some((e) => e.data.n === 201));
  }, 120_000);
});
