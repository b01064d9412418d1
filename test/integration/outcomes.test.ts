// Issue 39, parts 1 and 2, black-box: conversations of every kind played through the widget and WhatsApp (a fake
// Graph API) with the test clock, on the run's engine (LMDB, or PostgreSQL in the postgres project): confirmed (a
// "yes" in the widget, "thanks" on WhatsApp), assumed, reopened, handed over by the model and by the API (an agent
// then changes the reason), abandoned. The telemetry API, /metrics and the webhooks show each outcome and the rates;
// a rating given in the widget and with WhatsApp's reply buttons is stored and summarized.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { RATING_TEXT } from '../../src/whatsapp/feedback.ts';
import { startFakeGraph } from '../support/fake-graph.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { parsePrometheusText, sampleValue } from '../support/prom-text.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { buttonReply, postWebhook, textMessage, until, WA, webhookBody } from '../support/whatsapp.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const HOOK_SECRET = 'hook-secret-0123456789abcdef';
const auth = { authorization: `Bearer ${TEST_SECRET}` };
/** The machine running the tests is shared and loaded: a turn may take seconds. */
const SLOW = 30_000;

async function api(p: TestParley, method: string, path: string, body?: unknown) {
  const res = await fetch(`${p.url()}${path}`, {
    method,
    headers: body === undefined ? auth : Object.assign({ 'content-type': 'application/json' }, auth),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}

async function setup() {
  const graph = await startFakeGraph();
  open.push(graph);
  // The signatures carry Parley's time, which the test moves a day ahead.
  const receiver = await startWebhookReceiver({ secret: HOOK_SECRET, toleranceSeconds: 3 * 86_400 });
  open.push(receiver);
  const p = await startParley({
    config: {
      channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA } },
      webhooks: { allow_private: true, endpoints: [{ url: receiver.url, secret: HOOK_SECRET, events: ['conversation.outcome'] }] },
      telemetry: { store_text: true },
      outcomes: { csat: true, estimate_experience: true },
    },
  });
  open.push(p);
  const sdk = createClient();
  sdk.expose(
    'getOrderStatus',
    { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
    async (a: { orderId: string }) => ({
      orderId: a.orderId,
      status: 'shipped',
    }),
  );
  sdk.expose('refundOrder', { description: 'Refund an order', parameters: z.object({ orderId: z.string(), amount: z.number() }), mode: 'write' }, async () => ({
    ok: true,
  }));
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  open.push({ close: () => sdk.close() });
  await until(
    async () => (await fetch(`${p.url()}/__test__/sdk/functions`)).json() as Promise<string[]>,
    (f) => f.length === 2,
    SLOW,
  );
  return { graph, receiver, p };
}

async function widget(p: TestParley, customerId: string): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return w;
}

/** Sends a message and waits for the assistant's answer (or, for a handoff, the status frame). */
async function ask(w: WidgetClient, id: string, text: string, answer: (f: Record<string, any>) => boolean = (f) => f.type === 'message') {
  w.send({ type: 'message', id, text });
  await w.next((f) => f.type === 'ack' && f.id === id, SLOW);
  return w.next(answer, SLOW);
}

const outcomeOf = async (p: TestParley, id: string) => (await api(p, 'GET', `/conversations/${id}/outcome`)).body;

describe('conversation outcomes', () => {
  it('every kind of conversation gets its outcome on the widget and WhatsApp; the API, /metrics and webhooks show them; ratings are kept', async () => {
    const { graph, receiver, p } = await setup();

    // Confirmed in the widget ("Did that answer your question?" → yes), then rated.
    const confirmed = await widget(p, 'w-confirmed');
    expect((await ask(confirmed, 'c1', 'what is the status of order 1001?')).text).toMatch(/shipped/);
    confirmed.send({ type: 'resolution', answer: 'yes' });
    await confirmed.next((f) => f.type === 'noted' && f.of === 'resolution', SLOW);
    expect(await outcomeOf(p, 'conv_web_w-confirmed')).toMatchObject({ status: 'resolved_confirmed', channel: 'web' });
    // The rating is asked as the outcome is decided (before or after the `noted`).
    await until(() => confirmed.frames.some((f) => f.type === 'rate'), Boolean, SLOW);
    confirmed.send({ type: 'rating', score: 5, comment: 'Quick and right' });
    await confirmed.next((f) => f.type === 'noted' && f.of === 'rating', SLOW);
    confirmed.send({ type: 'rating', score: 9 });
    expect(await confirmed.next((f) => f.type === 'error', SLOW)).toMatchObject({ code: 'bad_frame' });

    // Answered and left alone (assumed), answered and back later (reopened).
    const assumed = await widget(p, 'w-assumed');
    await ask(assumed, 'a1', 'what is the status of order 1002?');
    const reopen = await widget(p, 'w-reopen');
    await ask(reopen, 'r1', 'what is the status of order 1003?');

    // Handed over by the model (the customer asked), and by the integrator's API with a policy reason.
    const person = await widget(p, 'w-person');
    await ask(person, 'p1', 'I want to talk to a person', (f) => f.type === 'status' && f.mode === 'human');
    const viaApi = await widget(p, 'w-api');
    await ask(viaApi, 'v1', 'what is the status of order 1004?');
    expect((await api(p, 'POST', '/conversations/conv_web_w-api/handoff', { reason: 'policy: refund over the limit' })).status).toBe(200);
    await until(
      () => outcomeOf(p, 'conv_web_w-api'),
      (o) => o?.status === 'handed_over',
      SLOW,
    );
    expect(await outcomeOf(p, 'conv_web_w-api')).toMatchObject({ reason: 'policy', reasonBy: 'api' });
    await until(
      () => outcomeOf(p, 'conv_web_w-person'),
      (o) => o?.status === 'handed_over',
      SLOW,
    );
    expect(await outcomeOf(p, 'conv_web_w-person')).toMatchObject({ reason: 'customer_asked', reasonBy: 'model' });

    // Abandoned: the assistant needs something from the customer, who never answers.
    const abandon = await widget(p, 'w-abandon');
    expect((await ask(abandon, 'x1', 'I want a refund please')).text).toMatch(/\?$/);

    // WhatsApp: one says thanks (confirmed) and rates with a reply button; one is answered and quiet (assumed).
    const A = '+15550000001';
    const B = '+15550000002';
    const says = async (phone: string, text: string) => expect((await postWebhook(p.url(), webhookBody([textMessage(phone, text)]))).status).toBe(200);
    const to = (phone: string) => graph.delivered().filter((r) => r.body.to === phone.slice(1));
    await says(A, 'what is the status of order 2001?');
    await says(B, 'what is the status of order 2002?');
    await until(
      () => to(A).length + to(B).length,
      (n) => n >= 2,
      SLOW,
    );
    await says(A, 'thanks, that solved it');
    const buttons = await until(
      () => to(A).find((r) => r.body.type === 'interactive'),
      (r) => r !== undefined,
      SLOW,
    );
    expect(buttons!.body.interactive.body.text).toBe(RATING_TEXT);
    const great = buttons!.body.interactive.action.buttons[0].reply;
    expect(great.id).toBe(`csat:conv_whatsapp_${await customerIdOf(p, A)}:5`);
    expect((await postWebhook(p.url(), webhookBody([buttonReply(A, great.id, great.title)]))).status).toBe(200);
    await until(
      async () => (await outcomeOf(p, `conv_whatsapp_${await customerIdOf(p, A)}`)).csat,
      (c) => c?.score === 5,
      SLOW,
    );

    // A day passes: every open conversation is decided; then one customer comes back (a reopen).
    await p.runtime.whatsapp.inbound.idle();
    await p.runtime.whatsapp.outboundQueue.idle();
    await api(p, 'POST', '/__test__/clock', { offsetMs: 25 * 3600_000 });
    const decided = await until(
      async () => (await api(p, 'GET', '/api/v1/telemetry/outcomes?until=' + (Date.now() + 26 * 3600_000))).body,
      (b) => b.summary.byOutcome.open === 0,
      SLOW,
    );
    expect(decided.summary.byOutcome).toEqual({ open: 0, resolved_confirmed: 2, resolved_assumed: 3, handed_over: 2, abandoned: 1, unresolved: 0 });
    await ask(reopen, 'r2', 'it is still not here, what is the status of order 1003?');
    // Outcomes are folded in just after the conversation's write commits.
    await until(
      () => outcomeOf(p, 'conv_web_w-reopen'),
      (o) => o?.status === 'open' && o.reopens === 1,
      SLOW,
    );

    // An agent changes the API handoff's reason.
    const changed = await api(p, 'PUT', '/conversations/conv_web_w-api/outcome/reason', { reason: 'missing_knowledge' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ reason: 'missing_knowledge', reasonBy: 'agent' });
    expect((await api(p, 'PUT', '/conversations/conv_web_w-assumed/outcome/reason', { reason: 'policy' })).status).toBe(409);
    const anonymous = await fetch(`${p.url()}/conversations/conv_web_w-api/outcome/reason`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'policy' }),
    });
    expect(anonymous.status).toBe(401);
    expect((await api(p, 'GET', '/conversations/conv_web_nobody/outcome')).status).toBe(404);
    expect((await api(p, 'PUT', '/conversations/conv_web_w-api/outcome/reason', { reason: 'because' })).body.error.code).toBe('validation_failed');

    const all = (await api(p, 'GET', '/api/v1/telemetry/outcomes?until=' + (Date.now() + 26 * 3600_000))).body;
    expect(all.summary).toMatchObject({
      conversations: 8,
      decided: 7,
      byOutcome: { open: 1, resolved_confirmed: 2, resolved_assumed: 2, handed_over: 2, abandoned: 1, unresolved: 0 },
      resolutionRate: 0.5714,
      handoffRate: 0.2857,
      handoffsByReason: { customer_asked: 1, missing_knowledge: 1, policy: 0 },
      reopens: 1,
      csat: { count: 2, average: 5 },
    });
    const row = all.items.find((r: any) => r.conversationId === 'conv_web_w-confirmed');
    expect(row).toMatchObject({ customer: { email: 'w-confirmed@example.com' }, csat: { score: 5, comment: 'Quick and right' } });
    expect(row.lastMessage.text).toMatch(/shipped/);
    // Filters: channel, outcome, customer (by email).
    const ids = async (q: string) =>
      (await api(p, 'GET', `/api/v1/telemetry/outcomes?until=${Date.now() + 26 * 3600_000}&${q}`)).body.items.map((r: any) => r.conversationId).sort();
    expect(await ids('channel=whatsapp')).toHaveLength(2);
    expect(await ids('outcome=handed_over')).toEqual(['conv_web_w-api', 'conv_web_w-person']);
    expect(await ids('customer=w-abandon')).toEqual(['conv_web_w-abandon']);
    expect(await ids('customer=nobody')).toEqual([]);
    // An anonymous session's email is not an indexed identity: found among the listed conversations all the same.
    expect(await ids('customer=W-Abandon@example.com')).toEqual(['conv_web_w-abandon']);
    expect((await api(p, 'GET', '/api/v1/telemetry/outcomes?outcome=maybe')).status).toBe(400);

    // The CSV export.
    const csv = await api(p, 'GET', `/api/v1/telemetry/outcomes.csv?until=${Date.now() + 26 * 3600_000}`);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/attachment/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines).toHaveLength(9);
    expect(lines.find((l) => l.includes('w-abandon'))).toContain('"abandoned"');

    // /metrics: outcomes by channel, outcome and reason; the reopen; the ratings.
    const families = parsePrometheusText((await api(p, 'GET', '/metrics')).text);
    const outcomes = (labels: Record<string, string>) => sampleValue(families, 'parley_conversation_outcomes_total', labels);
    expect(outcomes({ channel: 'web', outcome: 'resolved_confirmed', reason: '' })).toBe(1);
    expect(outcomes({ channel: 'whatsapp', outcome: 'resolved_confirmed', reason: '' })).toBe(1);
    expect(outcomes({ channel: 'web', outcome: 'resolved_assumed', reason: '' })).toBe(2);
    expect(outcomes({ channel: 'whatsapp', outcome: 'resolved_assumed', reason: '' })).toBe(1);
    expect(outcomes({ channel: 'web', outcome: 'handed_over', reason: 'customer_asked' })).toBe(1);
    expect(outcomes({ channel: 'web', outcome: 'handed_over', reason: 'policy' })).toBe(1);
    expect(outcomes({ channel: 'web', outcome: 'abandoned', reason: '' })).toBe(1);
    expect(sampleValue(families, 'parley_conversation_reopens_total', { channel: 'web' })).toBe(1);
    expect(sampleValue(families, 'parley_conversation_ratings_total', { kind: 'csat', score: '5' })).toBe(2);

    // The estimated experience: the (offline) model scored every conversation once it had an outcome, apart from CSAT.
    const estimated = await until(
      async () => (await api(p, 'GET', '/api/v1/telemetry/outcomes?until=' + (Date.now() + 26 * 3600_000))).body.summary.experience,
      (x) => x.count === 8,
      SLOW,
    );
    expect(estimated).toMatchObject({ estimated: true });
    expect(estimated.average).toBeGreaterThanOrEqual(1);
    expect((await outcomeOf(p, 'conv_web_w-confirmed')).experience).toMatchObject({ score: expect.any(Number), comment: expect.any(String) });
    expect((await outcomeOf(p, 'conv_web_w-confirmed')).csat.score).toBe(5);

    // Webhooks: one conversation.outcome per decision and the reopen, signed (the receiver checks).
    const events = await until(
      () => receiver.delivered().filter((e) => e.type === 'conversation.outcome'),
      (e) => e.length === 9,
      SLOW,
    );
    const count = (outcome: string) => events.filter((e) => e.data.outcome === outcome).length;
    expect([count('resolved_confirmed'), count('resolved_assumed'), count('handed_over'), count('abandoned'), count('reopened')]).toEqual([2, 3, 2, 1, 1]);
    expect(events.find((e) => e.data.conversationId === 'conv_web_w-person')!.data).toMatchObject({ outcome: 'handed_over', reason: 'customer_asked' });
  }, 240_000);
});

async function customerIdOf(p: TestParley, phone: string): Promise<string> {
  const list = (await api(p, 'GET', `/api/v1/telemetry/outcomes?channel=whatsapp&since=0&until=${Date.now() + 30 * 86_400_000}`)).body.items as any[];
  const found = list.find((r) => r.customer?.phone === phone);
  if (!found) throw new Error(`no WhatsApp conversation of ${phone}: ${JSON.stringify(list)}`);
  return found.customerId;
}
