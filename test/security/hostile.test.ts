// Issue 8 part 3: hostile input, property-based (fast-check). Every HTTP
// route, every widget and SDK frame, the WhatsApp webhook: never a 500, never
// a crash or an unhandled rejection; errors are {error:{code,message}} 4xx.
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/whatsapp/signature.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { WA } from '../support/whatsapp.ts';

let p: TestParley;
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  p = await startParley({ config: { proactive: { enabled: true }, channels: { whatsapp: { enabled: true, provider: 'meta', ...WA, graph_url: 'http://127.0.0.1:9/v21.0' } } } });
});
afterAll(async () => {
  await p?.close();
  process.off('unhandledRejection', onUnhandled);
});

const ROUTES: { method: string; path: string; auth?: boolean }[] = [
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/ready' },
  { method: 'POST', path: '/auth/magic-link', auth: true },
  { method: 'GET', path: '/auth/verify' },
  { method: 'POST', path: '/proactive', auth: true },
  { method: 'POST', path: '/proactive/opt-in', auth: true },
  { method: 'POST', path: '/customers/link', auth: true },
  { method: 'GET', path: '/api/v1/telemetry/events', auth: true },
  { method: 'GET', path: '/api/v1/telemetry/turn-calls', auth: true },
  { method: 'GET', path: '/api/v1/telemetry/summary', auth: true },
  { method: 'GET', path: '/api/v1/telemetry/conversations', auth: true },
  { method: 'POST', path: '/__test__/clock' },
  { method: 'GET', path: '/wa/webhook' },
];

const jsonValue = fc.jsonValue({ maxDepth: 4 });
const queryString = fc.array(fc.tuple(fc.constantFrom('token', 'limit', 'since', 'until', 'type', 'cursor', 'order', 'hub.mode', 'hub.verify_token', 'hub.challenge', 'x'), fc.string({ maxLength: 30 })), { maxLength: 4 });

async function expectGoodError(res: Response, what: string) {
  expect(res.status, what).toBeLessThan(500);
  if (res.status >= 400) {
    const body = await res.json().catch(() => undefined);
    expect(body?.error?.code, what).toEqual(expect.any(String));
    expect(body?.error?.message, what).toEqual(expect.any(String));
  } else await res.arrayBuffer();
}

describe('hostile HTTP input', () => {
  for (const route of ROUTES) {
    it(`${route.method} ${route.path}: random bodies, queries and headers never 500`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(jsonValue.map((v) => JSON.stringify(v)), fc.string({ maxLength: 200 })),
          queryString,
          fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-8'),
          fc.boolean(),
          async (body, query, contentType, withAuth) => {
            const qs = new URLSearchParams(query).toString();
            const headers: Record<string, string> = { 'content-type': contentType };
            if (route.auth && withAuth) headers.authorization = `Bearer ${TEST_SECRET}`;
            const res = await fetch(`${p.url()}${route.path}${qs ? `?${qs}` : ''}`, { method: route.method, headers, body: route.method === 'GET' ? undefined : body });
            await expectGoodError(res, `${route.method} ${route.path} ${qs} ${body.slice(0, 80)}`);
          },
        ),
        { numRuns: 40 },
      );
    });
  }

  it('a body over 1 MiB → 413', async () => {
    const res = await fetch(`${p.url()}/proactive`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` }, body: JSON.stringify({ content: 'x'.repeat(1024 * 1024 + 10) }) });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('payload_too_large');
  });

  it('JSON nested too deeply → 400; prototype poisoning → 400', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const res = await fetch(`${p.url()}/proactive`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` }, body: deep });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/nested deeper/);
    const proto = await fetch(`${p.url()}/proactive`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` }, body: '{"__proto__":{"admin":true}}' });
    expect(proto.status).toBe(400);
  });

  it('signed but hostile WhatsApp payloads never 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          jsonValue,
          fc.record({ object: fc.constant('whatsapp_business_account'), entry: fc.array(fc.record({ changes: fc.array(fc.record({ value: fc.record({ messages: fc.array(fc.dictionary(fc.constantFrom('id', 'from', 'type', 'text', 'timestamp', 'interactive'), jsonValue), { maxLength: 3 }) }) }), { maxLength: 2 }) }), { maxLength: 2 }) }),
        ),
        async (payload) => {
          const raw = JSON.stringify(payload);
          const res = await fetch(`${p.url()}/wa/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signPayload(raw, WA.app_secret) }, body: raw });
          await expectGoodError(res, raw.slice(0, 200));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('no unhandled rejection so far, and the server still answers', async () => {
    expect(unhandled).toEqual([]);
    expect((await fetch(`${p.url()}/health`)).status).toBe(200);
  });
});

function socket(path: string, headers: Record<string, string> = {}) {
  return new Promise<{ ws: WebSocket; frames: unknown[]; closed: Promise<number> }>((resolve, reject) => {
    const ws = new WebSocket(`${p.url().replace('http', 'ws')}${path}`, { headers });
    const frames: unknown[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.once('open', () => resolve({ ws, frames, closed }));
    ws.once('error', reject);
  });
}

const waitFor = async (cond: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
};

describe('hostile WebSocket frames', () => {
  it('widget: every random frame gets an error frame and the connection stays up', async () => {
    const { ws, frames } = await socket('/widget/ws');
    await fc.assert(
      fc.asyncProperty(fc.oneof(jsonValue.map((v) => JSON.stringify(v)), fc.string({ maxLength: 100 }), fc.record({ type: fc.constantFrom('init', 'message', 'confirm', 'x'), id: fc.anything() }).map((v) => JSON.stringify(v))), async (frame) => {
        const before = frames.length;
        ws.send(frame);
        await waitFor(() => frames.length > before);
        expect(frames.length, frame).toBeGreaterThan(before);
        expect(ws.readyState).toBe(WebSocket.OPEN);
      }),
      { numRuns: 80 },
    );
    expect((frames as { type: string }[]).every((f) => f.type === 'error')).toBe(true);
    ws.close();
  });

  it('widget: a frame over 64 KiB closes with 1009', async () => {
    const { ws, closed } = await socket('/widget/ws');
    ws.send(JSON.stringify({ type: 'message', id: 'x', text: 'y'.repeat(70 * 1024) }));
    expect(await closed).toBe(1009);
  });

  it('SDK: every random frame gets an error frame and the connection stays up', async () => {
    const { ws, frames } = await socket('/sdk', { authorization: `Bearer ${TEST_SECRET}` });
    await fc.assert(
      fc.asyncProperty(fc.oneof(jsonValue.map((v) => JSON.stringify(v)), fc.string({ maxLength: 100 }), fc.record({ type: fc.constantFrom('result', 'sent', 'ingest', 'register', 'nope'), id: fc.anything(), functions: fc.anything() }).map((v) => JSON.stringify(v))), async (frame) => {
        const before = frames.length;
        ws.send(frame);
        await waitFor(() => frames.length > before, 300);
        expect(ws.readyState).toBe(WebSocket.OPEN);
      }),
      { numRuns: 80 },
    );
    expect(frames.length).toBeGreaterThan(40);
    ws.close();
    expect(unhandled).toEqual([]);
  });
});
