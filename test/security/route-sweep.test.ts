// Every HTTP route under hostile input. The routes come from the running app itself (fastify's route tree), so a new
// route is swept the day it is added; each gets malformed JSON, bodies of the wrong type, missing, extra and hostile
// fields (huge strings, NUL, lone surrogates, deep nesting, numbers at the edges), hostile path params (too long, `..`,
// `%00`, emoji, bad percent-encoding), hostile queries (repeated keys, arrays, huge, negative, NaN), wrong content
// types and empty bodies; with its credential and without. Never a 5xx (but /ready's documented 503), never a hang;
// every error is `{error:{code,message}}` with a code of the one catalogue (sdk/src/error-codes.ts) and that code's
// status; nothing logged at error or fatal; the server still ready afterwards. A route whose credential the table
// below gets wrong fails too: with its credential, some request must get past authentication.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_ERRORS } from '../../sdk/src/error-codes.ts';
import { signPayload } from '../../src/whatsapp/signature.ts';
import { asService, newSignedInAgent, post, sessionOf, type SignedInAgent } from '../support/agents.ts';
import { startFakeGraph, type FakeGraph } from '../support/fake-graph.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { Agent, hostileCases, inPool, listRoutes, rawRequest, type Answer, type HostileCase, type SweptRoute } from '../support/route-sweep.ts';
import { BODY_SEEDS, QUERY_SEEDS } from '../support/route-seeds.ts';
import { WA } from '../support/whatsapp.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const BODY_LIMIT = 64 * 1024;
const ANSWER_WITHIN_MS = 20_000; // a hang, not a slow answer on a busy machine
const ADMIN_EMAIL = 'sweep-admin@example.com';
/** A conversation that exists and is with a person: routes about a conversation go past "not found" with it. */
const CONVERSATION = 'conv_web_sweep-customer';
let bodies = 0;
const caseOptions = {
  bodyLimit: BODY_LIMIT,
  param: (name: string) => (name === 'conversationId' ? CONVERSATION : 'sweep_x1'),
  fill: (s: string) =>
    s
      .replaceAll('{conversationId}', CONVERSATION)
      .replaceAll('{email}', ADMIN_EMAIL)
      .replaceAll('{unique}', String(++bodies))
      .replaceAll('{nowSeconds}', String(Math.floor(Date.now() / 1000))),
};

type Credential = 'public' | 'service' | 'agent' | 'whatsapp';
/**
 * Who may call each family of routes (first match wins; any other route takes the service secret). A route this
 * table gets wrong is caught by the "reached" check: with its credential, some request must get past authentication.
 */
const FAMILIES: [RegExp, Credential][] = [
  // An agent's own routes and the inbox: the session cookie, with the CSRF token on state-changing requests.
  [/^\/api\/v1\/(inbox\/|agents\/(me|sign-out))/, 'agent'],
  // Meta's webhook: the POST is signed over its raw bytes (GET is Meta's verification challenge).
  [/^\/wa\/webhook$/, 'whatsapp'],
  // Anyone: liveness and readiness, sign-in and set-password links, the widget's socket and demo session, the pages
  // and bundles, the test-mode routes (test mode only, as here) that tests call without a secret.
  [/^\/(health|ready|diagnostics|auth\/verify|agents\/set-password|demo\/session|widget\/ws)$/, 'public'],
  [/^\/api\/v1\/agents\/(sign-in|set-password)$/, 'public'],
  [/^\/__test__\/(clock|sdk\/functions|whatsapp\/outbox|telemetry)$/, 'public'],
  [/^\/(telemetry|inbox|[\w.-]+\.(js|json|html))$/, 'public'],
];
const credentialOf = (url: string): Credential => FAMILIES.find(([re]) => re.test(url))?.[1] ?? 'service';

/** Routes that document a 503 (not ready). */
const MAY_503 = new Set(['/ready']);
/** What only authentication answers: a request refused with one of these did not reach the route. */
const AUTH_REFUSALS = new Set(['unauthorized', 'csrf_failed', 'invalid_signature']);

let p: TestParley;
let graph: FakeGraph;
let admin: SignedInAgent;
const http = new Agent({ keepAlive: true, maxSockets: 8 });
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
  graph = await startFakeGraph();
  p = await startParley({
    config: {
      server: { body_limit_bytes: BODY_LIMIT },
      proactive: { enabled: true },
      demo: { backend: true },
      agents: { sign_in_per_ip_per_minute: 1_000_000, sign_in_per_account_per_minute: 1_000_000 },
      // Meta's Graph API at the edge: the replies to the webhook's messages are sent, media ids are unknown (404).
      channels: { whatsapp: { enabled: true, provider: 'meta', ...WA, graph_url: graph.url } },
    },
  });
  admin = await newSignedInAgent(p, ADMIN_EMAIL, 'admin');
  const w = await startWidgetSession(p.url(), { customerId: 'sweep-customer', email: 'sweep-customer@example.com' });
  w.send({ type: 'message', id: 'sweep-m1', text: 'hello' });
  await w.next((f) => f.type === 'ack' && f.id === 'sweep-m1', 30_000);
  w.close();
  expect((await post(p, `/conversations/${CONVERSATION}/handoff`, {}, asService)).status).toBe(200);
}, 90_000);

afterAll(async () => {
  http.destroy();
  await p?.close();
  await graph?.close();
  process.off('unhandledRejection', onUnhandled);
  process.off('uncaughtException', onUnhandled);
});

function headersFor(credential: Credential, c: HostileCase, method: string): Record<string, string> {
  const headers: Record<string, string> = c.contentType ? { 'content-type': c.contentType } : {};
  if (credential === 'service') headers.authorization = `Bearer ${TEST_SECRET}`;
  if (credential === 'agent') Object.assign(headers, { cookie: admin.cookie, 'x-csrf-token': admin.csrf });
  if (credential === 'whatsapp' && method === 'POST') headers['x-hub-signature-256'] = signPayload(c.body ?? Buffer.alloc(0), WA.app_secret);
  return headers;
}

/** What is wrong with one answer, or undefined. */
function fault(route: SweptRoute, withCredential: boolean, credential: Credential, a: Answer): string | undefined {
  if (a.status >= 500 && !(a.status === 503 && MAY_503.has(route.url))) return `status ${a.status}`;
  if (!withCredential && credential !== 'public' && a.status < 400) return `status ${a.status} without a credential`;
  if (a.status < 400 || route.method === 'HEAD') return undefined;
  let body: { error?: { code?: unknown; message?: unknown } };
  try {
    body = JSON.parse(a.text);
  } catch {
    return `status ${a.status} with a body that is not JSON`;
  }
  const code = body.error?.code;
  if (typeof code !== 'string' || !Object.hasOwn(HTTP_ERRORS, code)) return `status ${a.status}: code ${JSON.stringify(code)} is not in the catalogue`;
  if (typeof body.error?.message !== 'string' || body.error.message === '') return `status ${a.status}: no message`;
  if (Object.keys(body).length !== 1) return `status ${a.status}: more than { error } in the body`;
  if (HTTP_ERRORS[code as keyof typeof HTTP_ERRORS].status !== a.status)
    return `status ${a.status} with code ${code} (the catalogue says ${HTTP_ERRORS[code as keyof typeof HTTP_ERRORS].status})`;
  return undefined;
}

/** Sweeps one route; resolves with its faults and whether any request with its credential got past authentication. */
async function sweep(route: SweptRoute): Promise<{ faults: string[]; reached: boolean; requests: number }> {
  const credential = credentialOf(route.url);
  const faults: string[] = [];
  let reached = credential === 'public';
  // Without the credential, the generic cases only: a refusal comes before any field is read.
  const runs = hostileCases(route, caseOptions).flatMap((c) =>
    credential === 'public' || c.seeded ? [[c, true] as const] : [[c, true] as const, [c, false] as const],
  );
  await inPool(runs, 8, async ([c, withCredential]) => {
    const what = `${route.method} ${route.url} [${c.name}${withCredential ? '' : ', no credential'}]`;
    let a: Answer;
    try {
      const headers = withCredential ? headersFor(credential, c, route.method) : c.contentType ? { 'content-type': c.contentType } : {};
      a = await rawRequest(http, p.url(), { method: route.method, path: c.path, headers, body: c.body }, ANSWER_WITHIN_MS);
    } catch (err) {
      faults.push(`${what}: ${(err as Error).message}`);
      return;
    }
    const wrong = fault(route, withCredential, credential, a);
    if (wrong) faults.push(`${what}: ${wrong} ${a.text.slice(0, 300)}`);
    if (withCredential && !c.beforeRoute && !authRefusal(a)) reached = true;
  });
  return { faults, reached, requests: runs.length };
}

function authRefusal(a: Answer): boolean {
  if (a.status !== 401 && a.status !== 403) return false;
  try {
    return AUTH_REFUSALS.has((JSON.parse(a.text) as { error: { code: string } }).error.code);
  } catch {
    return true;
  }
}

/** Resolves once the WhatsApp queues hold nothing (the webhook's messages handled, the replies sent). */
async function settled() {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [inbound, outbound] = await Promise.all([p.services.store.jobs.counts('wa-inbound'), p.services.store.jobs.counts('wa-outbound')]);
    if (inbound.queued === 0 && outbound.queued === 0) return;
    if (Date.now() > deadline) {
      const warnings = p.logs.filter((l) => (JSON.parse(l) as { level: number }).level >= 40).map((l) => l.slice(0, 400));
      const pend = [...(await p.services.store.jobs.pending('wa-inbound')).slice(0, 3), ...(await p.services.store.jobs.pending('wa-outbound')).slice(0, 3)];
      throw new Error(
        `the WhatsApp queues did not empty within 60 s: ${inbound.queued} inbound, ${outbound.queued} outbound; ${JSON.stringify(pend).slice(0, 3000)} warnings:\n${warnings.slice(-8).join('\n')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Puts back what a route's hostile requests may have moved: the test clock, the admin's session. */
async function restore() {
  expect((await post(p, '/__test__/clock', { offsetMs: 0 })).status).toBe(200);
  const me = await fetch(`${p.url()}/api/v1/agents/me`, { headers: { cookie: admin.cookie } });
  await me.arrayBuffer();
  if (me.status === 401) Object.assign(admin, await sessionOf(p, ADMIN_EMAIL));
}

describe('every HTTP route under hostile input', () => {
  it('answers each with a catalogued 4xx error (or success): never a 5xx, a hang, an error log or a route left unreached', async () => {
    const started = Date.now();
    // Signing out ends the admin's session: those routes go last, so the others are swept signed in.
    const routes = listRoutes(p.app).sort((a, b) => Number(a.url.includes('/sign-out')) - Number(b.url.includes('/sign-out')));
    expect(routes.length).toBeGreaterThan(60);
    // A seed whose route is gone would test nothing.
    expect([...Object.keys(BODY_SEEDS), ...Object.keys(QUERY_SEEDS)].filter((k) => !routes.some((r) => `${r.method} ${r.url}` === k))).toEqual([]);
    const logsBefore = p.logs.length;
    const faults: string[] = [];
    const unreached: string[] = [];
    let requests = 0;
    for (const route of routes) {
      const r = await sweep(route);
      requests += r.requests;
      faults.push(...r.faults);
      if (!r.reached) unreached.push(`${route.method} ${route.url} (${credentialOf(route.url)})`);
      await restore();
    }
    // What the webhook queued is handled after its 200: the log is read once both WhatsApp queues are empty.
    await settled();
    const ready = await fetch(`${p.url()}/ready`);
    expect(ready.status, await ready.text()).toBe(200);
    const loud = p.logs.slice(logsBefore).filter((l) => (JSON.parse(l) as { level: number }).level >= 50);
    console.info(`route sweep: ${routes.length} routes, ${requests} requests in ${Date.now() - started} ms`);
    expect({ faults, unreached, loud: loud.map((l) => l.slice(0, 500)), unhandled }).toEqual({ faults: [], unreached: [], loud: [], unhandled: [] });
  }, 300_000);

  it('a telemetry summary of more buckets than it may hold is refused (since=0 in 1-second buckets asked for 1.8 billion)', async () => {
    // 30 days in seconds, 2.6 million buckets: enough to be refused, small enough to survive without the bound.
    const since = Date.now() - 30 * 86_400_000;
    const r = await fetch(`${p.url()}/api/v1/telemetry/summary?since=${since}&bucketMs=1000`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'validation_failed',
      message: expect.stringMatching(/bucketMs/),
    });
    const fine = await fetch(`${p.url()}/api/v1/telemetry/summary?bucketMs=60000`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    expect(fine.status).toBe(200);
    expect(((await fine.json()) as { buckets: number[] }).buckets).toHaveLength(1440);
  });

  it('the test clock moves no further than 100 years ahead or 30 back (1e308 overflowed every time the store keeps)', async () => {
    for (const offsetMs of [1e308, 2 ** 60, -(2 ** 60), 101 * 365 * 86_400_000, 0.5]) {
      const r = await post(p, '/__test__/clock', { offsetMs });
      expect(r.status, String(offsetMs)).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    }
    expect((await post(p, '/__test__/clock', { offsetMs: 0 })).status).toBe(200);
  });
});
