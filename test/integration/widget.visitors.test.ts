// Visitors (issue 32 parts 2 and 3), over the real widget socket: a visitor chats, comes back with their visitor token
// to the same conversation, signs in with an identity token and finds their messages in the customer's history (once,
// however often the sign-in repeats). Creating visitors is limited per address, and visitors' messages per visitor.
// A visitor's turn is offered only read functions exposed with `visitors: true` (never write or destructive ones),
// the model is told to ask them to sign in, and a function it names anyway is not run. Proactive messages and
// handoff reach visitors.
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { VISITOR_PROMPT } from '../../src/conversations/llm-step.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';

const SECRET = 'identity-secret-0123456789abcdef';
const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

type Overrides = NonNullable<Parameters<typeof startParley>[0]>['config'];
async function start(config: Overrides = {}): Promise<TestParley> {
  const base: Overrides = { identity: { jwt_secret: SECRET, visitors: true, allow_anonymous: false } };
  const p = await startParley({ config: { ...config, identity: { ...base.identity, ...config.identity } } });
  open.push(p);
  return p;
}

async function init(p: TestParley, frame: Record<string, unknown>) {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', ...frame });
  const first = await w.next((f) => f.type === 'ready' || f.type === 'error', 30_000);
  return { w, first };
}

async function say(w: WidgetClient, id: string, text: string) {
  w.send({ type: 'message', id, text });
  await w.next((f) => f.type === 'ack' && f.id === id, 30_000);
  return w.next((f) => f.type === 'message' && f.role === 'assistant', 30_000);
}

const identityToken = (sub: string) =>
  new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));

const texts = (ready: Record<string, any>) => (ready.history as { role: string; text: string }[]).map((h) => `${h.role}: ${h.text}`);

describe('visitors', () => {
  it("chat, come back to the same conversation, sign in: the visitor's messages join the customer's history once", async () => {
    const p = await start();
    const first = await init(p, {});
    expect(first.first).toMatchObject({ type: 'ready', history: [] });
    const visitorId: string = first.first.customerId;
    const visitorToken: string = first.first.visitorToken;
    expect(visitorId).toMatch(/^vis_/);
    expect(visitorToken).toMatch(/^vt1\./);
    await say(first.w, 'v1', 'hello, I am just looking');
    first.w.close();

    // A reload: the same visitor, the same conversation.
    const back = await init(p, { visitorToken });
    expect(back.first).toMatchObject({ type: 'ready', customerId: visitorId, conversationId: first.first.conversationId });
    expect(texts(back.first)[0]).toBe('user: hello, I am just looking');
    expect(back.first.visitorToken).toMatch(/^vt1\./);
    await say(back.w, 'v2', 'do you ship abroad?');
    back.w.close();

    // The customer had a conversation of their own already.
    const token = await identityToken('shopper-9');
    const own = await init(p, { authToken: token });
    await say(own.w, 'c1', 'my own earlier question');
    own.w.close();

    const signedIn = await init(p, { authToken: token, visitorToken });
    expect(signedIn.first).toMatchObject({ type: 'ready', customerId: own.first.customerId });
    expect(signedIn.first.visitorToken).toBeUndefined();
    const after = texts(signedIn.first);
    expect(after.filter((t) => t.startsWith('user: '))).toEqual([
      'user: my own earlier question',
      'user: hello, I am just looking',
      'user: do you ship abroad?',
    ]);
    expect(after).toHaveLength(6);

    // Again (another tab, a retry): nothing joins twice.
    const again = await init(p, { authToken: token, visitorToken });
    expect(texts(again.first)).toEqual(after);
    // The device that keeps the visitor token sees an empty conversation: the messages are the customer's now.
    const visitorAgain = await init(p, { visitorToken });
    expect(visitorAgain.first).toMatchObject({ type: 'ready', customerId: visitorId, history: [] });
    // The customer's conversation goes on with the visitor's messages in its history.
    await say(again.w, 'c2', 'thanks');
    const stored = await p.services.store.history.recent(again.first.conversationId, 100, ['user']);
    expect(stored.map((r) => r.text)).toEqual(['my own earlier question', 'hello, I am just looking', 'do you ship abroad?', 'thanks']);
  });

  it('two sign-ins at once with one visitor token join the conversation once', async () => {
    const p = await start();
    const v = await init(p, {});
    await say(v.w, 'v1', 'first question');
    await say(v.w, 'v2', 'second question');
    const token = await identityToken('racer-1');
    const [a, b] = await Promise.all([
      init(p, { authToken: token, visitorToken: v.first.visitorToken }),
      init(p, { authToken: token, visitorToken: v.first.visitorToken }),
    ]);
    expect(a.first.customerId).toBe(b.first.customerId);
    const stored = await p.services.store.history.recent(a.first.conversationId, 100, ['user']);
    expect(stored.map((r) => r.text)).toEqual(['first question', 'second question']);
  });

  it('an unknown or forged visitor token starts a new visitor; without identity.visitors a tokenless init is refused', async () => {
    const p = await start();
    const a = await init(p, {});
    const forged = await init(p, { visitorToken: `${a.first.visitorToken.slice(0, -4)}AAAA` });
    expect(forged.first.type).toBe('ready');
    expect(forged.first.customerId).not.toBe(a.first.customerId);

    const off = await start({ identity: { visitors: false } });
    const refused = await init(off, {});
    expect(refused.first).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect((await refused.w.closed).code).toBe(4001);
    expect((await init(off, { visitorToken: a.first.visitorToken })).first).toMatchObject({ type: 'error', code: 'unauthorized' });
  });

  it('allow_anonymous still works beside visitors: customerId and email make an anonymous session', async () => {
    const p = await start({ identity: { allow_anonymous: true } });
    const anon = await init(p, { customerId: 'dev-1', email: 'dev@example.com' });
    expect(anon.first).toMatchObject({ type: 'ready', customerId: 'dev-1' });
    expect(anon.first.visitorToken).toBeUndefined();
    expect((await p.services.store.customers.get('dev-1'))?.externalId).toBe('anon:dev-1');
  });

  it('limits new visitors per address and messages per visitor; a returning visitor is not a new one', async () => {
    const p = await start({ identity: { visitor_creations_per_ip_per_minute: 3, visitor_messages_per_minute: 2 } });
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await init(p, {}));
    expect(made.map((m) => m.first.type)).toEqual(['ready', 'ready', 'ready']);
    const fourth = await init(p, {});
    expect(fourth.first).toMatchObject({ type: 'error', code: 'rate_limited' });
    expect((await fourth.w.closed).code).toBe(4029);
    const back = await init(p, { visitorToken: made[0].first.visitorToken });
    expect(back.first).toMatchObject({ type: 'ready', customerId: made[0].first.customerId });

    await say(back.w, 'r1', 'one');
    await say(back.w, 'r2', 'two');
    back.w.send({ type: 'message', id: 'r3', text: 'three' });
    expect(await back.w.next((f) => f.type === 'error' || (f.type === 'ack' && f.id === 'r3'), 30_000)).toMatchObject({ type: 'error', code: 'rate_limited' });
    // Another visitor has their own allowance.
    await say(made[1].w, 'o1', 'mine');
  });

  it("visitors' messages from one address are limited together", async () => {
    const p = await start({ identity: { visitor_messages_per_ip_per_minute: 3 } });
    const a = await init(p, {});
    const b = await init(p, {});
    await say(a.w, 'a1', 'one');
    await say(b.w, 'b1', 'two');
    await say(a.w, 'a2', 'three');
    b.w.send({ type: 'message', id: 'b2', text: 'four' });
    expect(await b.w.next((f) => f.type === 'error' || (f.type === 'ack' && f.id === 'b2'), 30_000)).toMatchObject({ type: 'error', code: 'rate_limited' });
    // A signed-in customer from the same address is not a visitor: not limited with them.
    const customer = await init(p, { authToken: await identityToken('same-address') });
    await say(customer.w, 'c1', 'five');
  });

  it("a visitor's turn is offered only read functions exposed with visitors: true; a function it names anyway is not run", async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    const p = await start({ llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', max_retries: 0 } });
    const ran: { name: string; verified: boolean }[] = [];
    const sdk = createClient();
    const record = (name: string) => (_args: unknown, ctx: { verified: boolean }) => {
      ran.push({ name, verified: ctx.verified });
      return { ok: true };
    };
    sdk.expose('shippingInfo', { description: 'Shipping countries', visitors: true }, record('shippingInfo'));
    sdk.expose('orderStatus', { description: 'An order status', parameters: z.object({ orderId: z.string() }) }, record('orderStatus'));
    sdk.expose('cancelOrder', { description: 'Cancel an order', mode: 'write', visitors: true }, record('cancelOrder'));
    sdk.expose('deleteAccount', { description: 'Delete the account', mode: 'destructive', visitors: true }, record('deleteAccount'));
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);

    const visitor = await init(p, {});
    llm.script({ toolCalls: [{ name: 'shippingInfo', args: {} }] }, { text: 'We ship to 30 countries.' });
    await say(visitor.w, 'q1', 'where do you ship?');
    const offered = (i: number) => (llm.requests[i].tools ?? []).map((t: any) => t.function.name).sort();
    const system = (i: number) => llm.requests[i].messages.filter((m: any) => m.role === 'system').map((m: any) => m.content);
    expect(offered(0)).toEqual(['handoff', 'shippingInfo']);
    expect(system(0)).toContain(VISITOR_PROMPT);
    expect(ran).toEqual([{ name: 'shippingInfo', verified: false }]);

    // The model names a write function it was not offered: it is not run, and the model hears why.
    llm.script({ toolCalls: [{ name: 'cancelOrder', args: {} }] }, { text: 'Please sign in first.' });
    await say(visitor.w, 'q2', 'cancel my order');
    expect(ran).toHaveLength(1);
    expect(JSON.stringify(llm.requests[3].messages)).toContain('needs the customer to sign in first');

    // Signed in: everything is offered, and tools see a verified customer.
    const customer = await init(p, { authToken: await identityToken('buyer-1') });
    llm.script({ toolCalls: [{ name: 'orderStatus', args: { orderId: '7' } }] }, { text: 'Order 7 is on its way.' });
    await say(customer.w, 'q3', 'where is order 7?');
    expect(offered(4)).toEqual(['cancelOrder', 'deleteAccount', 'handoff', 'orderStatus', 'shippingInfo']);
    expect(system(4)).not.toContain(VISITOR_PROMPT);
    expect(ran.at(-1)).toEqual({ name: 'orderStatus', verified: true });
  });

  it('proactive messages and handoff reach a visitor', async () => {
    const p = await start({ proactive: { enabled: true, daily_cap: 3, dedup_window_hours: 24 } });
    const v = await init(p, {});
    const externalId = (await p.services.store.customers.get(v.first.customerId))!.externalId;
    expect(externalId).toMatch(/^visitor:/);
    const post = (path: string, body: unknown) => fetch(`${p.url()}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    expect((await post('/proactive/opt-in', { customerExternalId: externalId, optIn: true })).status).toBe(200);
    const sent = await post('/proactive', { customerExternalId: externalId, channel: 'web', content: 'Need a hand choosing?' });
    expect(await sent.json()).toMatchObject({ accepted: true });
    expect(await v.w.next((f) => f.type === 'message' && f.proactive === true, 30_000)).toMatchObject({ text: 'Need a hand choosing?' });

    await say(v.w, 'h1', 'hi, which size should I take?');
    const handed = await post(`/conversations/${v.first.conversationId}/handoff`, { reason: 'pre-sales' });
    expect(handed.status).toBe(200);
    expect(await v.w.next((f) => f.type === 'status', 30_000)).toMatchObject({ mode: 'human' });
  });
});
