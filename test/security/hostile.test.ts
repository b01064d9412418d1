// Issue 8 part 3: hostile input, property-based (fast-check). Every HTTP
// route (API, webhook, metrics, diagnostics, static assets, test-mode routes,
// the WebSocket routes asked for without an upgrade) with random bodies,
// queries and header names and values; every widget and SDK frame; the
// WhatsApp webhook signed and unsigned: never a 500, never a crash or an
// unhandled rejection (a process-level listener collects them); errors are
// {error:{code,message}} 4xx. Hop-by-hop headers (connection, upgrade,
// transfer-encoding, content-length, expect, host, keep-alive, te, trailer)
// are not generated: the HTTP client refuses to send them.
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../sdk/src/protocol.ts';
import { signPayload } from '../../src/whatsapp/signature.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { dumpStored } from '../support/stored.ts';
import { WA } from '../support/whatsapp.ts';

let p: TestParley;
/** The same configuration outside test mode: /diagnostics and /__test__/* must look like unknown routes. */
let prod: TestParley;
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);

const config = {
  proactive: { enabled: true },
  channels: { whatsapp: { enabled: true, provider: 'meta' as const, ...WA, graph_url: 'http://127.0.0.1:9/v21.0' } },
};
beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  // The test-mode server also serves the demo backend's /demo/session.
  p = await startParley({ config: { ...config, demo: { backend: true } } });
  prod = await startParley({ config, testMode: false });
});
afterAll(async () => {
  await p?.close();
  await prod?.close();
  process.off('unhandledRejection', onUnhandled);
});

/** `unknown`: must answer exactly like an unknown route given the same request; `refused`: never a 2xx. */
type Route = { method: string; path: string; auth?: boolean; prod?: boolean; unknown?: true; refused?: true };
const ROUTES: Route[] = [
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/ready' },
  { method: 'POST', path: '/auth/magic-link', auth: true },
  { method: 'GET', path: '/auth/verify' },
  { method: 'POST', path: '/proactive', auth: true },
  { method: 'POST', path: '/proactive/opt-in', auth: true },
  { method: 'POST', path: '/customers/link', auth: true },
  // Not a media id: refused before any Graph call (the configured graph_url is unreachable here).
  { method: 'GET', path: '/whatsapp/media/not-a-media-id', auth: true },
  { method: 'GET', path: '/api/v1/telemetry/events', auth: true },
  { method: 'GET', path: '/api/v1/telemetry/turn-calls', auth: true },
  { method: 'GET', path: '/api/v1/telemetry/summary', auth: true },
  { method: 'GET', path: '/api/v1/telemetry/conversations', auth: true },
  { method: 'GET', path: '/api/v1/conversations/conv_web_x/scenario', auth: true },
  { method: 'GET', path: '/metrics', auth: true },
  { method: 'GET', path: '/diagnostics' },
  { method: 'GET', path: '/diagnostics', auth: true, prod: true },
  { method: 'GET', path: '/demo/session' },
  { method: 'GET', path: '/widget.js' },
  { method: 'GET', path: '/demo.html' },
  { method: 'GET', path: '/telemetry' },
  { method: 'GET', path: '/dashboard.js' },
  { method: 'GET', path: '/__test__/clock' },
  { method: 'POST', path: '/__test__/clock' },
  { method: 'GET', path: '/__test__/sdk/functions' },
  { method: 'GET', path: '/__test__/whatsapp/outbox' },
  { method: 'DELETE', path: '/__test__/whatsapp/outbox' },
  { method: 'GET', path: '/__test__/clock', prod: true, unknown: true },
  { method: 'POST', path: '/__test__/clock', prod: true, unknown: true },
  { method: 'GET', path: '/__test__/sdk/functions', prod: true, unknown: true },
  { method: 'GET', path: '/__test__/whatsapp/outbox', prod: true, unknown: true },
  { method: 'DELETE', path: '/__test__/whatsapp/outbox', prod: true, unknown: true },
  { method: 'GET', path: '/__test__/conversations/conv_web_x/tool-calls', auth: true },
  { method: 'POST', path: '/__test__/sdk/invoke', auth: true },
  { method: 'GET', path: '/__test__/conversations/conv_web_x/tool-calls', prod: true, unknown: true },
  { method: 'POST', path: '/__test__/sdk/invoke', prod: true, unknown: true },
  { method: 'GET', path: '/wa/webhook' },
  { method: 'POST', path: '/wa/webhook', refused: true },
  // WebSocket routes asked for over plain HTTP (no upgrade): a 4xx with an error body.
  { method: 'GET', path: '/sdk', auth: true },
  { method: 'GET', path: '/widget/ws' },
];

const jsonValue = fc.jsonValue({ maxDepth: 4 });
// Header names: a few that Parley reads, plus random tokens. Values: printable ASCII and Latin-1.
const HOP_BY_HOP = new Set([
  'connection',
  'upgrade',
  'transfer-encoding',
  'content-length',
  'expect',
  'host',
  'keep-alive',
  'te',
  'trailer',
  'proxy-connection',
  'http2-settings',
]);
const headerName = fc
  .oneof(
    fc.constantFrom(
      'authorization',
      'x-service-secret',
      'x-hub-signature-256',
      'origin',
      'cookie',
      'accept',
      'accept-encoding',
      'accept-language',
      'x-forwarded-for',
      'x-forwarded-proto',
      'content-type',
      'content-encoding',
      'if-none-match',
      'if-modified-since',
      'range',
      'referer',
      'user-agent',
      'x-request-id',
    ),
    fc.stringMatching(/^[a-z][a-z0-9_.!#$%&'*+^`|~-]{0,20}$/),
  )
  .filter((n) => !HOP_BY_HOP.has(n));
const headerValue = fc.oneof(
  fc.stringMatching(/^[\x20-\x7e]{0,80}$/),
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength: 40,
  }),
  // Cookies Parley reads (the demo visitor), with values that are not valid percent-encoding.
  fc.stringMatching(/^[%a-fA-F0-9\x20-\x7e]{0,40}$/).map((v) => `parley_demo_visitor=${v}`),
);
const randomHeaders = fc.dictionary(headerName, headerValue, { maxKeys: 5 });
const queryString = fc.array(
  fc.tuple(
    fc.constantFrom('token', 'limit', 'since', 'until', 'type', 'cursor', 'order', 'hub.mode', 'hub.verify_token', 'hub.challenge', 'x'),
    fc.string({ maxLength: 30 }),
  ),
  { maxLength: 4 },
);

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
    const where = route.prod ? ' (not test mode)' : '';
    const promise = route.unknown ? '; answered like an unknown route' : route.refused ? '; refused' : '';
    it(`${route.method} ${route.path}${where}: random bodies, queries and headers never 500${promise}`, async () => {
      const server = route.prod ? prod : p;
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            jsonValue.map((v) => JSON.stringify(v)),
            fc.string({ maxLength: 200 }),
          ),
          queryString,
          fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-8'),
          fc.boolean(),
          randomHeaders,
          async (body, query, contentType, withAuth, extra) => {
            const qs = new URLSearchParams(query).toString();
            const headers: Record<string, string> = { 'content-type': contentType, ...extra };
            if (route.auth && withAuth) headers.authorization = `Bearer ${TEST_SECRET}`;
            const ask = (path: string) =>
              fetch(`${server.url()}${path}${qs ? `?${qs}` : ''}`, { method: route.method, headers, body: route.method === 'GET' ? undefined : body });
            const res = await ask(route.path);
            const what = `${route.method} ${route.path} ${qs} ${JSON.stringify(extra).slice(0, 200)} ${body.slice(0, 80)}`;
            if (route.refused) expect(res.status, what).toBeGreaterThanOrEqual(400);
            if (route.unknown) {
              const unknown = await ask('/__test__/no-such-route');
              const [a, b] = [await res.clone().json(), await unknown.json()];
              expect([res.status, a.error?.code], what).toEqual([unknown.status, b.error?.code]);
            }
            if (route.prod && route.path === '/diagnostics' && headers.authorization !== `Bearer ${TEST_SECRET}`) expect(res.status, what).toBe(404);
            await expectGoodError(res, what);
          },
        ),
        { numRuns: 40 },
      );
    });
  }

  it('unsigned, wrongly signed and random POST /wa/webhook → 401; nothing is queued or recorded', async () => {
    // The WhatsApp bookkeeping and every job record (ids, queued jobs, sequence reservations).
    const footprint = () => dumpStored(p, ['webhookSeen', 'deliveries', 'sent', 'sendAttempts', 'jobs']);
    const before = await footprint();
    const plausible = fc.record({
      object: fc.constant('whatsapp_business_account'),
      entry: fc.constant([
        {
          id: 'WABA',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: WA.phone_id },
                messages: [{ from: '15550001234', id: 'wamid.unsigned', timestamp: '1700000000', type: 'text', text: { body: 'hi' } }],
              },
            },
          ],
        },
      ]),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(plausible, jsonValue),
        fc.oneof(
          fc.constant(undefined),
          headerValue,
          fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => `sha256=${h}`),
          fc.constant('wrong-secret'),
        ),
        randomHeaders,
        async (payload, signature, extra) => {
          const raw = JSON.stringify(payload);
          const headers: Record<string, string> = { ...extra, 'content-type': 'application/json' };
          delete headers['x-hub-signature-256'];
          if (signature === 'wrong-secret') headers['x-hub-signature-256'] = signPayload(raw, 'not-the-app-secret');
          else if (signature !== undefined) headers['x-hub-signature-256'] = signature;
          const res = await fetch(`${p.url()}/wa/webhook`, { method: 'POST', headers, body: raw });
          expect(res.status, raw.slice(0, 200)).toBe(401);
          await expectGoodError(res, raw.slice(0, 200));
        },
      ),
      { numRuns: 80 },
    );
    expect(await footprint()).toBe(before);
  });

  it('a body over 1 MiB → 413', async () => {
    const res = await fetch(`${p.url()}/proactive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` },
      body: JSON.stringify({ content: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('payload_too_large');
  });

  it('JSON nested too deeply → 400; prototype poisoning → 400', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const res = await fetch(`${p.url()}/proactive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` },
      body: deep,
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/nested deeper/);
    const proto = await fetch(`${p.url()}/proactive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` },
      body: '{"__proto__":{"admin":true}}',
    });
    expect(proto.status).toBe(400);
  });

  it('signed but hostile WhatsApp payloads never 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          jsonValue,
          fc.record({
            object: fc.constant('whatsapp_business_account'),
            entry: fc.array(
              fc.record({
                changes: fc.array(
                  fc.record({
                    value: fc.record({
                      messages: fc.array(fc.dictionary(fc.constantFrom('id', 'from', 'type', 'text', 'timestamp', 'interactive'), jsonValue), { maxLength: 3 }),
                    }),
                  }),
                  { maxLength: 2 },
                ),
              }),
              { maxLength: 2 },
            ),
          }),
        ),
        async (payload) => {
          const raw = JSON.stringify(payload);
          const res = await fetch(`${p.url()}/wa/webhook`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-hub-signature-256': signPayload(raw, WA.app_secret) },
            body: raw,
          });
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

// Generous: under a busy machine an answer can take seconds; a passing run returns as soon as the condition holds.
const waitFor = async (cond: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
};

describe('hostile WebSocket frames', () => {
  it('widget: every random frame gets an error frame and the connection stays up', async () => {
    const { ws, frames } = await socket('/widget/ws');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          jsonValue.map((v) => JSON.stringify(v)),
          fc.string({ maxLength: 100 }),
          // An `init` with no credentials is not a bad frame but a refused sign-in (below): it closes the socket.
          fc.record({ type: fc.constantFrom('message', 'confirm', 'x'), id: fc.anything() }).map((v) => JSON.stringify(v)),
        ),
        async (frame) => {
          const before = frames.length;
          ws.send(frame);
          await waitFor(() => frames.length > before);
          expect(frames.length, frame).toBeGreaterThan(before);
          expect(ws.readyState).toBe(WebSocket.OPEN);
        },
      ),
      { numRuns: 80 },
    );
    expect((frames as { type: string }[]).every((f) => f.type === 'error')).toBe(true);
    ws.close();
  });

  it('widget: an init with no credentials (visitors off) is refused as unauthorized and closed with 4001', async () => {
    const { ws, frames, closed } = await socket('/widget/ws');
    ws.send(JSON.stringify({ type: 'init', id: [] }));
    expect(await Promise.race([closed, new Promise((r) => setTimeout(() => r('still open after 30 s'), 30_000))])).toBe(4001);
    expect(frames).toEqual([expect.objectContaining({ type: 'error', code: 'unauthorized' })]);
  });

  it('widget: a frame over 64 KiB closes with 1009', async () => {
    const { ws, closed } = await socket('/widget/ws');
    ws.send(JSON.stringify({ type: 'message', id: 'x', text: 'y'.repeat(70 * 1024) }));
    expect(await Promise.race([closed, new Promise((r) => setTimeout(() => r('still open after 5 s'), 5000))])).toBe(1009);
  });

  it('SDK: a frame over the SDK limit (MAX_FRAME_BYTES) closes with 1009', async () => {
    const { ws, closed } = await socket('/sdk', { authorization: `Bearer ${TEST_SECRET}` });
    ws.send(JSON.stringify({ type: 'register', functions: [], pad: 'y'.repeat(MAX_FRAME_BYTES) }));
    expect(await Promise.race([closed, new Promise((r) => setTimeout(() => r('still open after 5 s'), 5000))])).toBe(1009);
  });

  it('SDK: every random frame gets an error frame and the connection stays up', async () => {
    const { ws, frames } = await socket('/sdk', { authorization: `Bearer ${TEST_SECRET}` });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          jsonValue.map((v) => JSON.stringify(v)),
          fc.string({ maxLength: 100 }),
          fc
            .record({ type: fc.constantFrom('result', 'sent', 'ingest', 'register', 'nope'), id: fc.anything(), functions: fc.anything() })
            .map((v) => JSON.stringify(v)),
        ),
        async (frame) => {
          const before = frames.length;
          ws.send(frame);
          await waitFor(() => frames.length > before, 300);
          expect(ws.readyState).toBe(WebSocket.OPEN);
        },
      ),
      { numRuns: 80 },
    );
    expect(frames.length).toBeGreaterThan(40);
    ws.close();
    expect(unhandled).toEqual([]);
  });
});

describe('the whole file', () => {
  it('saw no unhandled rejection, and both servers still answer', async () => {
    expect(unhandled).toEqual([]);
    expect((await fetch(`${p.url()}/health`)).status).toBe(200);
    expect((await fetch(`${prod.url()}/health`)).status).toBe(200);
  });
});
