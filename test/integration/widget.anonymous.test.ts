// Anonymous widget init (identity.allow_anonymous) may resume only the anonymous customer it created, with the same
// email, and lives in its own namespace (issue 15 part 7): whatever id a visitor claims, it never reaches a signed-in
// customer's record, history, live replies or identity, before or after that customer exists. Black-box: the real
// widget socket, the real /auth routes, /proactive and a real SDK.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const json = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };

async function init(p: TestParley, frame: Record<string, unknown>) {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', ...frame });
  const first = await w.next((f) => f.type === 'ready' || f.type === 'error');
  return { w, first };
}

async function say(w: WidgetClient, id: string, text: string) {
  w.send({ type: 'message', id, text });
  return w.next((f) => f.type === 'message' && f.role === 'assistant');
}

const magicLink = (p: TestParley, body: { email: string; externalId: string }) =>
  fetch(`${p.url()}/auth/magic-link`, { method: 'POST', headers: json, body: JSON.stringify(body) });

async function signIn(p: TestParley, email: string, externalId: string) {
  const res = await magicLink(p, { email, externalId });
  expect(res.status).toBe(200);
  const verified = await fetch((await res.json()).url);
  expect(verified.status).toBe(200);
  return (await verified.json()) as { customerId: string; externalId: string; email: string; sessionToken: string };
}

/** An SDK whose tool records the context Parley gives it (what an integrator's backend would trust). */
async function recordingSdk(p: TestParley) {
  const contexts: { customerId: string; externalId?: string; verified: boolean }[] = [];
  const sdk = createClient();
  sdk.expose('getOrderStatus', { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) }, async ({ orderId }, ctx) => {
    contexts.push({ customerId: ctx.customerId, externalId: ctx.externalId, verified: ctx.verified });
    return { orderId, status: 'shipped' };
  });
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  open.push(sdk);
  return contexts;
}

describe('anonymous widget init', () => {
  it('resumes its own customer with the same email (any case), and refuses another email', async () => {
    const p = await startParley();
    open.push(p);
    const a = await init(p, { customerId: 'anon-1', email: 'ann@example.com' });
    expect(a.first).toMatchObject({ type: 'ready', customerId: 'anon-1' });
    a.w.send({ type: 'message', id: 'm1', text: 'my secret order is 1001' });
    await a.w.next((f) => f.type === 'message');

    const again = await init(p, { customerId: 'anon-1', email: 'ANN@example.com' });
    expect(again.first).toMatchObject({ type: 'ready', customerId: 'anon-1' });
    expect(again.first.history.length).toBe(2);

    const intruder = await init(p, { customerId: 'anon-1', email: 'mallory@example.com' });
    expect(intruder.first).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect((await intruder.w.closed).code).toBe(4001);
    expect(intruder.w.frames.some((f) => f.type === 'ready')).toBe(false);
  });

  it('claiming a signed-in customer’s externalId gives a separate, empty record; claiming its customerId is refused', async () => {
    const p = await startParley();
    open.push(p);
    const bob = await signIn(p, 'bob@example.com', 'bob');
    const real = await init(p, { customerId: bob.customerId, authToken: bob.sessionToken });
    await say(real.w, 'b1', 'my address is 1 Private Road');

    const byExternalId = await init(p, { customerId: 'bob', email: 'bob@example.com' });
    expect(byExternalId.first).toMatchObject({ type: 'ready', customerId: 'bob', history: [] });
    expect(byExternalId.first.conversationId).not.toBe(`conv_web_${bob.customerId}`);

    const byCustomerId = await init(p, { customerId: bob.customerId, email: 'bob@example.com' });
    expect(byCustomerId.first).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect((await byCustomerId.w.closed).code).toBe(4001);
    // A WhatsApp customer likewise.
    const customers = createCustomerRepo(p.services.store, p.services.clock);
    const wa = await customers.upsert({ externalId: '+15550001111', phone: '+15550001111' });
    const r = await init(p, { customerId: wa.customerId, email: 'x@example.com' });
    expect(r.first).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect(await customers.get(bob.customerId)).toMatchObject({ externalId: 'bob', email: 'bob@example.com' });
    expect((await customers.get(wa.customerId))?.email).toBeUndefined();
    // Bob's next sign-in is still Bob's record, with his history.
    const again = await signIn(p, 'bob@example.com', 'bob');
    expect(again.customerId).toBe(bob.customerId);
    expect((await init(p, { customerId: again.customerId, authToken: again.sessionToken })).first.history).toHaveLength(2);
  });

  it('an id claimed anonymously before the real customer signs in: the magic link creates the real one beside it, nothing crosses over', async () => {
    const p = await startParley({ config: { proactive: { enabled: true } } });
    open.push(p);
    const contexts = await recordingSdk(p);

    // Mallory guesses the integrator's id for Alice before Alice ever signs in.
    const mallory = await init(p, { customerId: 'alice-ext', email: 'mallory@evil.example' });
    expect(mallory.first).toMatchObject({ type: 'ready', customerId: 'alice-ext' });
    await say(mallory.w, 'x1', 'status of order 1001');
    // Her tool calls say she is anonymous: the integrator's backend never sees its own id for her.
    // Nobody verified an anonymous claim; a session token (magic link) is a verified customer.
    expect(contexts.at(-1)).toEqual({ customerId: 'alice-ext', externalId: 'anon:alice-ext', verified: false });

    // Alice signs in through the integrator: a new record with her email, not Mallory's.
    const alice = await signIn(p, 'alice@real.example', 'alice-ext');
    expect(alice).toMatchObject({ externalId: 'alice-ext', email: 'alice@real.example' });
    expect(alice.customerId).not.toBe('alice-ext');
    const aliceWidget = await init(p, { customerId: alice.customerId, authToken: alice.sessionToken });
    expect(aliceWidget.first).toMatchObject({ type: 'ready', customerId: alice.customerId, history: [] });
    await say(aliceWidget.w, 'a1', 'status of order 2002, my address is 1 Secret Street');
    expect(contexts.at(-1)).toEqual({ customerId: alice.customerId, externalId: 'alice-ext', verified: true });

    // Mallory comes back with the same claim: her own record, her own history; none of Alice's.
    const back = await init(p, { customerId: 'alice-ext', email: 'mallory@evil.example' });
    expect(back.first).toMatchObject({ type: 'ready', customerId: 'alice-ext' });
    expect(JSON.stringify(back.first.history)).not.toContain('Secret Street');
    expect(back.first.history.map((h: { text: string }) => h.text)).toContain('status of order 1001');
    // Alice's email does not open it either.
    expect((await init(p, { customerId: 'alice-ext', email: 'alice@real.example' })).first).toMatchObject({ type: 'error', code: 'unauthorized' });

    // Proactive messages to Alice's externalId reach Alice only.
    await fetch(`${p.url()}/proactive/opt-in`, { method: 'POST', headers: json, body: JSON.stringify({ customerExternalId: 'alice-ext', optIn: true }) });
    const sent = await (
      await fetch(`${p.url()}/proactive`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ customerExternalId: 'alice-ext', channel: 'web', content: 'Your parcel left' }),
      })
    ).json();
    expect(sent.accepted).toBe(true);
    expect(await aliceWidget.w.next((f) => f.type === 'message' && f.proactive === true)).toMatchObject({ text: 'Your parcel left' });
    await new Promise((r) => setTimeout(r, 200));
    expect(back.w.frames.some((f) => f.text === 'Your parcel left')).toBe(false);

    // Identities stay apart: the email index knows Alice's verified email, never a visitor's claim.
    const customers = createCustomerRepo(p.services.store, p.services.clock);
    expect((await customers.findBy('email', 'alice@real.example'))?.customerId).toBe(alice.customerId);
    expect(await customers.findBy('email', 'mallory@evil.example')).toBeUndefined();
    expect((await customers.findBy('ext', 'alice-ext'))?.customerId).toBe(alice.customerId);

    // The anonymous namespace cannot be asked for through a magic link.
    const reserved = await magicLink(p, { email: 'mallory@evil.example', externalId: 'anon:alice-ext' });
    expect(reserved.status).toBe(400);
    expect((await reserved.json()).error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('body.externalId') });
  });
});
