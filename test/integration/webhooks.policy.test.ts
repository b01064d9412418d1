// Issue 34, parts 1, 3 and 4, on a real Parley with real local receivers: the same URL twice and private literal
// addresses are refused at start with a clear error; a name that resolves to a private address is refused when it is
// connected to (after DNS) unless `webhooks.allow_private`; credentials inside a webhook URL reach the receiver (Basic
// authentication, the query) and nowhere else: not one log line at trace level, not the deliveries API (which the
// dashboard reads), not telemetry.
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/config/address-policy.ts';
import { startBadReceiver } from '../support/bad-receiver.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const SECRET = 'hook-secret-0123456789abcdef';
const auth = { authorization: `Bearer ${TEST_SECRET}` };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function poll<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await pause(50);
  }
}

const getJson = async (p: TestParley, path: string) => (await fetch(`${p.url()}${path}`, { headers: auth })).json() as Promise<any>;

const emit = (p: TestParley, text: string) =>
  p.runtime.webhooks.emit({ type: 'message.customer', createdAt: Date.now(), data: { conversationId: 'conv_p', text } });

describe('webhook endpoints at start', () => {
  it('the same URL twice is refused with an error naming both entries (its credentials masked)', async () => {
    const url = 'https://hook-user:dup-pass-0123456789@hooks.example.com/in?token=dup-token-0123456789';
    const start = startParley({
      config: {
        webhooks: {
          endpoints: [
            { url, secret: SECRET },
            { url, secret: 'another-secret-0123456789' },
          ],
        },
      },
    });
    const err = (await start.then(
      () => undefined,
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toContain('https://***:***@hooks.example.com/in?token=*** is also entry 0: one entry per URL');
    expect(err.message).not.toContain('dup-pass');
    expect(err.message).not.toContain('dup-token');
  });

  it('a loopback, private or metadata literal is refused by default, accepted with allow_private', async () => {
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://169.254.169.254/latest',
      'http://[fd00:ec2::254]/',
      'http://10.0.0.1/',
      'http://[::ffff:192.168.0.1]/',
    ]) {
      const err = (await startParley({ config: { webhooks: [{ url, secret: SECRET }] } }).then(
        () => undefined,
        (e: unknown) => e,
      )) as Error | undefined;
      expect(err?.message, url).toMatch(/is a loopback, private or link-local address .*refused unless webhooks.allow_private is true/);
    }
    const p = await startParley({ config: { webhooks: { allow_private: true, endpoints: [{ url: 'http://127.0.0.1:9/x', secret: SECRET }] } } });
    open.push(p);
  });
});

describe('a name that resolves to a private address', () => {
  it('is refused when connected to (after DNS) by default; delivered with allow_private', async () => {
    const name = hostname();
    const resolved = await lookup(name, { all: true });
    expect(
      resolved.every((a) => isPrivateAddress(a.address)),
      `this test needs the machine's name to resolve to loopback or a private address: ${JSON.stringify(resolved)}`,
    ).toBe(true);
    const receiver = await startBadReceiver({ secret: SECRET, behaviour: { mode: 'status', status: 200 } });
    open.push(receiver);
    // The receiver listens on 127.0.0.1; reached by the machine's name when that resolves to it.
    const url = receiver.url.replace('127.0.0.1', name);
    const refusing = await startParley({ config: { webhooks_retry_base_ms: 60_000, webhooks: { endpoints: [{ url, secret: SECRET }] } } });
    open.push(refusing);
    await emit(refusing, 'to a private name');
    const view = await poll(
      'the refused attempt',
      () => getJson(refusing, '/api/v1/webhooks/deliveries'),
      (v) => v.retrying[0]?.lastError !== undefined,
    );
    expect(view.retrying[0].lastError).toBe('private_address');
    expect(receiver.requests).toHaveLength(0);
    await refusing.close();

    const allowing = await startParley({ config: { webhooks: { allow_private: true, endpoints: [{ url, secret: SECRET }] } } });
    open.push(allowing);
    await emit(allowing, 'allowed now');
    await poll(
      'the delivery',
      async () => receiver.requests.length,
      (n) => n === 1,
    );
  }, 90_000);
});

describe('redirects', () => {
  it('are not followed: a 307 to another receiver is a failed attempt, retried at the endpoint itself', async () => {
    const target = await startBadReceiver({ secret: SECRET, behaviour: { mode: 'status', status: 200 } });
    open.push(target);
    const redirecting = await startBadReceiver({ secret: SECRET, behaviour: { mode: 'status', status: 307, headers: { location: target.url } } });
    open.push(redirecting);
    const p = await startParley({
      config: { webhooks_retry_base_ms: 100, webhooks: { allow_private: true, endpoints: [{ url: redirecting.url, secret: SECRET }] } },
    });
    open.push(p);
    await emit(p, 'redirected');
    await poll(
      'three attempts at the redirecting endpoint',
      async () => redirecting.requests.length,
      (n) => n >= 3,
    );
    const view = await getJson(p, '/api/v1/webhooks/deliveries');
    expect(view.retrying[0].lastError).toBe('HTTP 307');
    expect(target.requests).toHaveLength(0);
  }, 60_000);
});

describe('credentials inside a webhook URL', () => {
  it('reach the receiver and appear in no log line (trace), no deliveries API answer and no telemetry', async () => {
    const receiver = await startBadReceiver({ secret: SECRET, behaviour: { mode: 'status', status: 500 } });
    open.push(receiver);
    const user = 'hook-user-name-01';
    const password = 'hook-pass-word-0123456789';
    const token = 'hook-token-value-0123456789';
    const sig = 'hook-sig-value-0123456789';
    const base = new URL(receiver.url);
    const url = `http://${user}:${password}@${base.host}${base.pathname}?token=${token}&sig=${sig}&plain=visible`;
    const p = await startParley({
      config: {
        logging: { level: 'trace' },
        webhooks_retry_hours: 0.0003, // about a second of retries, then a dead letter
        webhooks_retry_base_ms: 100,
        webhooks: { allow_private: true, endpoints: [{ url, secret: SECRET }] },
      },
    });
    open.push(p);
    await emit(p, 'first');
    await emit(p, 'second');
    const view = await poll(
      'two dead letters',
      () => getJson(p, '/api/v1/webhooks/deliveries'),
      (v) => v.counts.dead === 2,
    );
    // The receiver got them: Basic authentication from the user info, the query as configured.
    expect(receiver.requests[0].authorization).toBe(`Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`);
    expect(receiver.requests[0].url).toBe(`/hooks?token=${token}&sig=${sig}&plain=visible`);
    const masked = `http://***:***@${base.host}/hooks?token=***&sig=***&plain=visible`;
    expect(view.endpoints).toEqual([{ url: masked, events: 'all' }]);
    expect(view.dead.map((d: { url: string }) => d.url)).toEqual([masked, masked]);
    expect(view.recent.length).toBeGreaterThan(2);
    // Telemetry is written in batches: the dead letters' events follow them.
    const telemetry = await poll(
      'the dead letters in telemetry',
      () => getJson(p, '/api/v1/telemetry/events?type=webhook.dead_letter'),
      (t) => t.items.length === 2,
    );
    const answers = JSON.stringify(view) + JSON.stringify(telemetry) + JSON.stringify(await getJson(p, '/diagnostics'));
    await p.close();
    const logs = p.logs.join('');
    expect(logs).toContain('webhook dead-lettered');
    for (const secret of [password, token, sig, user]) {
      expect(answers.includes(secret), `an API answer contains ${secret}`).toBe(false);
      expect(logs.includes(secret), `a log line contains ${secret}`).toBe(false);
    }
  }, 90_000);
});
