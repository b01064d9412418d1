// Issue 8 part 5: the authorization matrix, token refusals, origins, and
// secrets never reaching the logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/src/index.ts';
import { startFakeGraph, type FakeGraph } from '../support/fake-graph.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { dumpStored } from '../support/stored.ts';
import { connectWidget } from '../support/widget-client.ts';
import { postWebhook, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

let p: TestParley;
let graph: FakeGraph;

// `hidden`: outside test mode the route is not advertised — a refusal is the 404 of an unknown route, not a 401.
const PROTECTED: { method: 'GET' | 'POST'; path: string; body?: unknown; hidden?: true }[] = [
  { method: 'POST', path: '/auth/magic-link', body: { email: 'm@example.com', externalId: 'matrix' } },
  { method: 'POST', path: '/proactive', body: { customerExternalId: 'matrix-customer', channel: 'web', content: 'hello', dedupKey: 'k1' } },
  { method: 'POST', path: '/proactive/opt-in', body: { customerExternalId: 'matrix-customer', optIn: true } },
  { method: 'POST', path: '/customers/link', body: { externalId: 'matrix-customer', phone: '+15550009876' } },
  { method: 'GET', path: '/api/v1/telemetry/events' },
  { method: 'GET', path: '/api/v1/telemetry/turn-calls' },
  { method: 'GET', path: '/api/v1/telemetry/summary' },
  { method: 'GET', path: '/api/v1/telemetry/conversations' },
  { method: 'GET', path: '/api/v1/telemetry/outcomes' },
  { method: 'GET', path: '/api/v1/telemetry/outcomes.csv' },
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/whatsapp/media/4242' },
  { method: 'GET', path: '/diagnostics', hidden: true },
];

const CREDENTIALS: { name: string; headers: Record<string, string>; ok: boolean }[] = [
  { name: 'no credential', headers: {}, ok: false },
  { name: 'wrong Bearer', headers: { authorization: 'Bearer not-the-secret' }, ok: false },
  { name: 'wrong x-service-secret', headers: { 'x-service-secret': 'not-the-secret' }, ok: false },
  { name: 'secret without Bearer', headers: { authorization: TEST_SECRET }, ok: false },
  { name: 'Basic scheme', headers: { authorization: `Basic ${TEST_SECRET}` }, ok: false },
  { name: 'secret prefix', headers: { authorization: `Bearer ${TEST_SECRET.slice(0, -1)}` }, ok: false },
  { name: 'right Bearer', headers: { authorization: `Bearer ${TEST_SECRET}` }, ok: true },
  { name: 'right x-service-secret', headers: { 'x-service-secret': TEST_SECRET }, ok: true },
];

const snapshotState = () => dumpStored(p, ['magicLinks', 'customers', 'identities', 'proactive']);

beforeAll(async () => {
  graph = await startFakeGraph();
  graph.addMedia('4242', { data: Buffer.from('a photo'), mimeType: 'image/jpeg' });
  p = await startParley({
    testMode: false,
    config: {
      logging: { level: 'trace' },
      proactive: { enabled: true },
      identity: { allow_anonymous: false },
      channels: { web: { allowed_origins: ['https://shop.example.com'] }, whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA } },
    },
  });
  const { createCustomerRepo } = await import('../../src/customers/repo.ts');
  await createCustomerRepo(p.services.store, p.services.clock).upsert({ externalId: 'matrix-customer', email: 'mc@example.com' });
});

afterAll(async () => {
  await p?.close();
  await graph?.close();
});

describe('authorization matrix', () => {
  for (const route of PROTECTED) {
    it(`${route.method} ${route.path}: only the right secret passes; refusals (${route.hidden ? '404 like an unknown route' : '401'}) have no side effect`, async () => {
      for (const cred of CREDENTIALS) {
        const before = await snapshotState();
        const res = await fetch(`${p.url()}${route.path}`, {
          method: route.method,
          headers: { ...cred.headers, ...(route.body ? { 'content-type': 'application/json' } : {}) },
          body: route.body ? JSON.stringify(route.body) : undefined,
        });
        if (cred.ok) {
          expect(res.status, `${cred.name}`).toBeLessThan(400);
          await res.arrayBuffer();
        } else if (route.hidden) {
          // Exactly what an unknown route answers: same status, same code, same message shape.
          const unknown = await fetch(`${p.url()}/no-such-route`, { headers: cred.headers });
          const unknownBody = await unknown.json();
          expect(res.status, `${cred.name}`).toBe(404);
          const body = await res.json();
          expect(body.error.code).toBe(unknownBody.error.code);
          expect(body.error.code).toBe('not_found');
          expect(body.error.message).toBe(unknownBody.error.message.replace('/no-such-route', route.path));
          expect(await snapshotState(), `${cred.name} changed state`).toBe(before);
        } else {
          expect(res.status, `${cred.name}`).toBe(401);
          const body = await res.json();
          expect(body.error.code).toBe('unauthorized');
          expect(typeof body.error.message).toBe('string');
          expect(await snapshotState(), `${cred.name} changed state`).toBe(before);
        }
      }
    });
  }

  it('test-mode routes do not exist outside test mode', async () => {
    for (const path of ['/__test__/sdk/functions', '/__test__/whatsapp/outbox', '/__test__/clock', '/__test__/conversations/conv_x/tool-calls']) {
      expect((await fetch(`${p.url()}${path}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).status).toBe(404);
    }
    const invoke = await fetch(`${p.url()}/__test__/sdk/invoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'getOrderStatus', args: {} }),
    });
    expect(invoke.status).toBe(404);
  });

  it('the SDK socket refuses a wrong secret before the upgrade', async () => {
    const sdk = createClient();
    await expect(sdk.listen({ url: p.url(), secret: 'wrong' })).rejects.toMatchObject({ status: 401 });
    await sdk.close();
  });

  it('the widget socket refuses an Origin that is not allowed (403), accepts an allowed one', async () => {
    await expect(connectWidget(p.url(), { origin: 'https://evil.example.com' })).rejects.toThrow('HTTP 403');
    const w = await connectWidget(p.url(), { origin: 'https://shop.example.com' });
    w.send({ type: 'init', customerId: 'x', authToken: 'v1.bad.token' });
    expect(await w.next(() => true)).toMatchObject({ type: 'error', code: 'unauthorized' });
    w.close();
  });

  it('a magic link is single use', async () => {
    const { url } = await (
      await fetch(`${p.url()}/auth/magic-link`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'once@example.com', externalId: 'once' }),
      })
    ).json();
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(401);
  });

  it('secrets and tokens never appear in the logs (trace level)', async () => {
    const { url } = await (
      await fetch(`${p.url()}/auth/magic-link`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'log@example.com', externalId: 'log' }),
      })
    ).json();
    const linkToken = new URL(url).searchParams.get('token')!;
    const { sessionToken, customerId } = await (await fetch(url)).json();
    const w = await connectWidget(p.url());
    w.send({ type: 'init', customerId, authToken: sessionToken });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'm', text: 'hello' });
    await w.next((f) => f.type === 'message');
    w.close();
    await postWebhook(p.url(), webhookBody([textMessage('+15550004321', 'hi')]));
    await postWebhook(p.url(), webhookBody([textMessage('+15550004321', 'bad sig')]), { secret: 'wrong' });
    await expect.poll(() => graph.delivered().length, { timeout: 15_000 }).toBeGreaterThan(0); // its logs are in too
    const logs = p.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const [name, secret] of Object.entries({
      TEST_SECRET,
      linkToken,
      sessionToken,
      waToken: WA.token,
      appSecret: WA.app_secret,
      verifyToken: WA.verify_token,
    })) {
      expect(logs.includes(secret), `${name} leaked into the logs`).toBe(false);
    }
  });
});
