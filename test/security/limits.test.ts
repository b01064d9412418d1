// Issue 8 part 4: limits and abuse.
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { startParley, TEST_SECRET } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';
import { postWebhook, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('rate limits', () => {
  it('/auth/magic-link per email and per IP → 429 with Retry-After', async () => {
    const p = await startParley({ config: { identity: { rate_limit_per_ip_per_minute: 8, rate_limit_per_email_per_minute: 3 } } });
    open.push(p);
    const ask = (email: string) => fetch(`${p.url()}/auth/magic-link`, { method: 'POST', headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' }, body: JSON.stringify({ email, externalId: email }) });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await ask('same@example.com')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await ask('same@example.com');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await limited.json()).error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('email') });
    const others = [];
    for (let i = 0; i < 6; i++) others.push((await ask(`u${i}@example.com`)).status);
    expect(others.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(others.slice(0, 3)).toEqual([200, 200, 200]);
  });

  it('/auth/verify per IP → 429 with Retry-After, before the token is even looked at', async () => {
    const p = await startParley({ config: { identity: { rate_limit_per_ip_per_minute: 5 } } });
    open.push(p);
    const codes = [];
    for (let i = 0; i < 7; i++) codes.push((await fetch(`${p.url()}/auth/verify?token=guess-${i}`)).status);
    expect(codes).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  it('the widget answers a message flood from one customer with a clear error frame', async () => {
    const p = await startParley({ config: { channels: { web: { rate_limit_per_minute: 6 } } } });
    open.push(p);
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'flood', email: 'f@example.com' });
    await w.next((f) => f.type === 'ready');
    for (let i = 0; i < 10; i++) w.send({ type: 'message', id: `m${i}`, text: 'hi' });
    const err = await w.next((f) => f.type === 'error');
    expect(err).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/Too many messages/) });
    await new Promise((r) => setTimeout(r, 200));
    expect(w.frames.filter((f) => f.type === 'ack')).toHaveLength(5);
    expect(w.socket.readyState).toBe(WebSocket.OPEN);
  });
});

describe('SDK connection flood', () => {
  it('32 at once, the rest 503; unregistered ones closed at 15 s (simulated clock), then slots are free again', async () => {
    const clock = createManualClock(Date.now());
    const p = await startParley({ clock });
    open.push(p);
    const url = `${p.url().replace('http', 'ws')}/sdk`;
    const attempt = () =>
      new Promise<{ ws?: WebSocket; status?: number; closed?: Promise<number> }>((resolve) => {
        const ws = new WebSocket(url, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
        const closed = new Promise<number>((r) => ws.on('close', (c) => r(c)));
        ws.once('open', () => resolve({ ws, closed }));
        ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
        ws.once('error', () => undefined);
      });
    const results = await Promise.all(Array.from({ length: 60 }, attempt));
    const accepted = results.filter((r) => r.ws);
    expect(accepted).toHaveLength(32);
    expect(results.filter((r) => r.status === 503)).toHaveLength(28);
    clock.advance(14_999);
    await new Promise((r) => setTimeout(r, 50));
    expect(accepted.every((r) => r.ws!.readyState === WebSocket.OPEN)).toBe(true);
    clock.advance(1);
    expect(await Promise.all(accepted.map((r) => r.closed))).toEqual(new Array(32).fill(4008));
    const after = await attempt();
    expect(after.ws).toBeDefined();
    after.ws!.close();
  });
});

describe('fairness', () => {
  it('a webhook flood does not starve widget turns', async () => {
    const p = await startParley({ config: { channels: { whatsapp: { enabled: true, provider: 'meta', verify_token: WA.verify_token, app_secret: WA.app_secret } } } });
    open.push(p);
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'fair', email: 'fair@example.com' });
    await w.next((f) => f.type === 'ready');
    const flood = Promise.all(
      Array.from({ length: 30 }, (_, b) => postWebhook(p.url(), webhookBody(Array.from({ length: 10 }, (_, i) => textMessage(`+1555100${String(b).padStart(2, '0')}${i}0`, `flood ${b}-${i}`))))),
    );
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    w.send({ type: 'message', id: 'vip', text: 'hello' });
    await w.next((f) => f.type === 'message', 10_000);
    const latency = Date.now() - started;
    const responses = await flood;
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(latency).toBeLessThan(1500);
  });
});
