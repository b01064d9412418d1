// Issue 4: magic links, session tokens, widget init with a token.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { hashToken } from '../../src/identity/magic-links.ts';
import { createSessionTokens } from '../../src/identity/session-token.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { dumpStored, storedValues } from '../support/stored.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function parley(extra: Record<string, unknown> = {}) {
  const p = await startParley({ config: { identity: { allow_anonymous: false }, ...extra } });
  open.push(p);
  return p;
}

const magicLink = (p: TestParley, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${TEST_SECRET}` }) =>
  fetch(`${p.url()}/auth/magic-link`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

async function signIn(p: TestParley, email = 'ann@example.com', externalId = 'user-42') {
  const { url } = await (await magicLink(p, { email, externalId })).json();
  const verified = await fetch(url);
  return { url, verified, body: await verified.json() };
}

const setClock = (p: TestParley, offsetMs: number) =>
  fetch(`${p.url()}/__test__/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ offsetMs }) });

async function initWith(p: TestParley, frame: Record<string, unknown>) {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', ...frame });
  return { w, first: await w.next(() => true) };
}

describe('magic link → session token → widget', () => {
  it('magic link → verify → sessionToken → init accepted', async () => {
    const p = await parley();
    const { url, verified, body } = await signIn(p);
    expect(url).toMatch(new RegExp(`^${p.url()}/auth/verify\\?token=[A-Za-z0-9_-]{43,}$`));
    expect(verified.status).toBe(200);
    expect(verified.headers.get('cache-control')).toBe('no-store');
    expect(body).toEqual({
      customerId: expect.stringMatching(/^cus_/),
      externalId: 'user-42',
      email: 'ann@example.com',
      sessionToken: expect.stringMatching(/^v1\./),
    });
    const { first } = await initWith(p, { customerId: body.customerId, authToken: body.sessionToken });
    expect(first).toMatchObject({ type: 'ready', customerId: body.customerId, history: [] });
    // the same externalId signs in to the same customer
    const again = await signIn(p, 'ann@example.com', 'user-42');
    expect(again.body.customerId).toBe(body.customerId);
  });

  it('the magic link answer carries the token beside the url (for the link to your own sign-in page) and when it expires', async () => {
    const p = await parley();
    const r = await magicLink(p, { email: 'tok@example.com', externalId: 'user-tok' });
    const body = await r.json();
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'token', 'url']);
    expect(body.url).toBe(`${p.url()}/auth/verify?token=${body.token}`);
    const ttl = Date.parse(body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    // the token alone is what your sign-in page hands back to your server, which verifies it
    const verified = await fetch(`${p.url()}/auth/verify?token=${encodeURIComponent(body.token)}`);
    expect(verified.status).toBe(200);
    expect((await verified.json()).externalId).toBe('user-tok');
  });

  it('a reused link → 401', async () => {
    const p = await parley();
    const { url } = await signIn(p);
    const reused = await fetch(url);
    expect(reused.status).toBe(401);
    expect((await reused.json()).error.code).toBe('invalid_token');
    expect((await fetch(`${p.url()}/auth/verify?token=unknown-token`)).status).toBe(401);
    expect((await fetch(`${p.url()}/auth/verify`)).status).toBe(400);
  });

  it('a link is valid just before 15 minutes and refused just after (test clock)', async () => {
    const p = await parley();
    const first = (await (await magicLink(p, { email: 'e@example.com', externalId: 'e1' })).json()).url;
    const second = (await (await magicLink(p, { email: 'f@example.com', externalId: 'f1' })).json()).url;
    await setClock(p, 15 * 60_000 - 1000);
    expect((await fetch(first)).status).toBe(200);
    await setClock(p, 15 * 60_000 + 1000);
    const late = await fetch(second);
    expect(late.status).toBe(401);
    expect((await late.json()).error.code).toBe('invalid_token');
  });

  it('a session token is accepted at 59 minutes and refused at 61 (test clock), with close code 4001', async () => {
    const p = await parley();
    const { body } = await signIn(p);
    await setClock(p, 59 * 60_000);
    const early = await initWith(p, { customerId: body.customerId, authToken: body.sessionToken });
    expect(early.first).toMatchObject({ type: 'ready', customerId: body.customerId });
    await setClock(p, 61 * 60_000);
    const { w, first } = await initWith(p, { customerId: body.customerId, authToken: body.sessionToken });
    expect(first).toMatchObject({ type: 'error', code: 'unauthorized', message: expect.stringContaining('expired') });
    expect((await w.closed).code).toBe(4001);
  });

  it('expired links are deleted by the periodic tick', async () => {
    const p = await parley();
    const { url } = await (await magicLink(p, { email: 'g@example.com', externalId: 'g1' })).json();
    const hash = hashToken(new URL(url).searchParams.get('token')!);
    const stored = () => p.services.store.transaction((tx) => tx.links.lock(hash));
    expect(await stored()).toMatchObject({ externalId: 'g1' });
    // The tick's timer is due in the moved clock, so it runs now.
    await setClock(p, 16 * 60_000);
    await expect.poll(stored, { timeout: 15_000 }).toBeUndefined();
  });

  it('a token for another customer, a tampered token, or one signed with another secret is refused', async () => {
    const p = await parley();
    const ann = await signIn(p, 'ann@example.com', 'ann');
    const bob = await signIn(p, 'bob@example.com', 'bob');
    const other = await initWith(p, { customerId: bob.body.customerId, authToken: ann.body.sessionToken });
    expect(other.first).toMatchObject({ type: 'error', code: 'unauthorized', message: expect.stringContaining('wrong_customer') });
    expect((await other.w.closed).code).toBe(4001);
    const [v, payload, sig] = ann.body.sessionToken.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: bob.body.customerId, iat: Date.now(), exp: Date.now() + 3600_000 })).toString('base64url');
    const tampered = await initWith(p, { customerId: bob.body.customerId, authToken: `${v}.${forged}.${sig}` });
    expect(tampered.first).toMatchObject({ type: 'error', code: 'unauthorized', message: expect.stringContaining('bad_signature') });
    expect((await tampered.w.closed).code).toBe(4001);
    const foreign = createSessionTokens({ serviceSecret: 'another-secret', ttlMinutes: 60, clock: createManualClock(Date.now()) }).issue(ann.body.customerId);
    const wrongKey = await initWith(p, { customerId: ann.body.customerId, authToken: foreign });
    expect(wrongKey.first).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect((await wrongKey.w.closed).code).toBe(4001);
    const garbage = await initWith(p, { customerId: ann.body.customerId, authToken: 'not-a-token' });
    expect(garbage.first).toMatchObject({ type: 'error', code: 'unauthorized', message: expect.stringContaining('malformed') });
    expect((await garbage.w.closed).code).toBe(4001);
    void payload;
  });

  it('anonymous init is refused unless identity.allow_anonymous', async () => {
    const p = await parley();
    const { w, first } = await initWith(p, { customerId: 'anon', email: 'a@example.com' });
    expect(first).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect((await w.closed).code).toBe(4001);
  });

  it('missing or wrong secret on /auth/magic-link → 401 and no link; a bad body → 400 naming the field', async () => {
    const p = await parley();
    for (const headers of [{}, { authorization: 'Bearer nope' }, { 'x-service-secret': 'nope' }, { authorization: TEST_SECRET }]) {
      const r = await magicLink(p, { email: 'x@example.com', externalId: 'x' }, headers as Record<string, string>);
      expect(r.status).toBe(401);
    }
    expect(await storedValues(p, 'magicLinks')).toEqual([]);
    expect((await magicLink(p, { email: 'x@example.com', externalId: 'x' }, { 'x-service-secret': TEST_SECRET })).status).toBe(200);
    const bad = await magicLink(p, { email: 'not-an-email', externalId: '' });
    expect(bad.status).toBe(400);
    const msg = (await bad.json()).error.message;
    expect(msg).toContain('body.email');
    expect(msg).toContain('body.externalId');
  });

  it('links are stored only as hashes', async () => {
    const p = await parley();
    const { url } = await (await magicLink(p, { email: 'h@example.com', externalId: 'h' })).json();
    const token = new URL(url).searchParams.get('token')!;
    const stored = await dumpStored(p, ['magicLinks']);
    expect(stored).not.toContain(token);
    expect(stored).toContain(hashToken(token));
  });
});
