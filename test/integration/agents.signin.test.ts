// Issue 35 part 1: agents are people with their own sign-in — accounts, set-password links, sessions as cookies
// with CSRF, rate-limited sign-in, sign-out everywhere, personal API keys. On LMDB and PostgreSQL.
import { afterEach, describe, expect, it } from 'vitest';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { asService, createAgent, newSignedInAgent, PASSWORD, post, sessionOf, setClock, signIn } from '../support/agents.ts';

const open: TestParley[] = [];
afterEach(async () => {
  for (const p of open.splice(0).reverse()) await p.close();
});

async function parley(config: Record<string, unknown> = {}) {
  const p = await startParley({ config });
  open.push(p);
  return p;
}

const get = (p: TestParley, path: string, headers: Record<string, string> = {}) => fetch(`${p.url()}${path}`, { headers });
const errorOf = async (r: Response) => ((await r.json()) as { error: { code: string; retryAfterMs?: number } }).error;

describe('agent accounts and sign-in', () => {
  it('created with a set-password link; signs in to a HttpOnly SameSite=Lax cookie session; GET /me gives the same CSRF token', async () => {
    const p = await parley();
    const { agentId, setPasswordUrl, token } = await createAgent(p, { email: 'Ada@Example.com', name: 'Ada', role: 'admin' });
    expect(setPasswordUrl).toMatch(/^\/agents\/set-password\?token=pl_[A-Za-z0-9_-]{43}$/);
    // No password yet: sign-in refused like a wrong one.
    expect((await signIn(p, 'ada@example.com')).status).toBe(401);
    expect((await post(p, '/api/v1/agents/set-password', { token, password: 'short' })).status).toBe(400);
    expect((await post(p, '/api/v1/agents/set-password', { token, password: PASSWORD })).status).toBe(200);
    const r = await signIn(p, 'ADA@example.com');
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toMatchObject({
      agent: { agentId, name: 'Ada', email: 'Ada@Example.com', role: 'admin', hasPassword: true },
      csrfToken: expect.stringMatching(/^pc_/),
    });
    expect(JSON.stringify(body)).not.toContain('passwordHash');
    const setCookie = r.headers.getSetCookie()[0];
    expect(setCookie).toMatch(/^parley_session=ps_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const cookie = setCookie.split(';')[0];
    const me = await get(p, '/api/v1/agents/me', { cookie });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ agent: { agentId }, csrfToken: body.csrfToken });
    // Nothing secret in the logs: not the password, the session token or the link's token.
    const logs = p.logs.join('\n');
    for (const secret of [PASSWORD, cookie.split('=')[1], token]) expect(logs).not.toContain(secret);
  });

  it('the cookie is Secure when the request came over https (trust_proxy and X-Forwarded-Proto)', async () => {
    const p = await parley({ server: { trust_proxy: true } });
    await newSignedInAgent(p, 'sec@example.com');
    const r = await signIn(p, 'sec@example.com', PASSWORD, { 'x-forwarded-proto': 'https' });
    expect(r.headers.getSetCookie()[0]).toMatch(/; Secure; Max-Age=/);
  });

  it('a wrong password and an unknown email are both 401 sign_in_failed; a request without a session is 401', async () => {
    const p = await parley();
    await newSignedInAgent(p, 'bob@example.com');
    const wrong = await signIn(p, 'bob@example.com', 'not the password');
    expect(wrong.status).toBe(401);
    expect((await errorOf(wrong)).code).toBe('sign_in_failed');
    expect(wrong.headers.getSetCookie()).toEqual([]);
    expect((await errorOf(await signIn(p, 'nobody@example.com'))).code).toBe('sign_in_failed');
    expect((await get(p, '/api/v1/agents/me')).status).toBe(401);
    expect((await get(p, '/api/v1/agents/me', { cookie: 'parley_session=ps_forged' })).status).toBe(401);
    expect((await get(p, '/conversations?state=withHuman')).status).toBe(401);
  });

  it('sign-in attempts are limited per account (429 with retryAfterMs), again allowed a minute later (test clock)', async () => {
    const p = await parley({ agents: { sign_in_per_account_per_minute: 3 } });
    await newSignedInAgent(p, 'cat@example.com'); // one attempt used
    for (let i = 0; i < 2; i++) expect((await signIn(p, 'CAT@example.com', 'wrong password')).status).toBe(401);
    const limited = await signIn(p, 'cat@example.com');
    expect(limited.status).toBe(429);
    const e = await errorOf(limited);
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterMs).toBeGreaterThan(0);
    expect(e.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another account from the same address is not limited by this one.
    await newSignedInAgent(p, 'dan@example.com');
    await setClock(p, 61_000);
    expect((await signIn(p, 'cat@example.com')).status).toBe(200);
  });

  it('sign-in attempts are limited per client IP across accounts', async () => {
    const p = await parley({ agents: { sign_in_per_ip_per_minute: 4 } });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await signIn(p, `who${i}@example.com`, 'wrong password')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
  });

  it('a state-changing request with the cookie but no (or a wrong) CSRF token is 403 csrf_failed; with it, it passes', async () => {
    const p = await parley();
    const a = await newSignedInAgent(p, 'eve@example.com');
    const other = await newSignedInAgent(p, 'fay@example.com');
    const handoff = (headers: Record<string, string>) => post(p, '/conversations/conv-x/handoff', {}, headers);
    const missing = await handoff({ cookie: a.cookie });
    expect(missing.status).toBe(403);
    expect((await errorOf(missing)).code).toBe('csrf_failed');
    expect((await errorOf(await handoff({ cookie: a.cookie, 'x-csrf-token': other.csrf }))).code).toBe('csrf_failed');
    expect((await errorOf(await handoff({ cookie: a.cookie, 'x-csrf-token': 'pc_AAAA' }))).code).toBe('csrf_failed');
    // With the token the request reaches the route (no such conversation).
    expect((await errorOf(await handoff({ cookie: a.cookie, 'x-csrf-token': a.csrf }))).code).toBe('conversation_not_found');
    // Reads need no CSRF token; sign-out needs it too.
    expect((await get(p, '/conversations?state=withHuman', { cookie: a.cookie })).status).toBe(200);
    expect((await errorOf(await post(p, '/api/v1/agents/sign-out', {}, { cookie: a.cookie }))).code).toBe('csrf_failed');
    // The service secret keeps working for systems.
    expect((await errorOf(await handoff({ authorization: `Bearer ${TEST_SECRET}` }))).code).toBe('conversation_not_found');
  });

  it('sign-out ends this session only; sign-out-everywhere ends every session of the agent', async () => {
    const p = await parley();
    const first = await newSignedInAgent(p, 'gus@example.com');
    const second = await sessionOf(p, 'gus@example.com');
    const third = await sessionOf(p, 'gus@example.com');
    const someoneElse = await newSignedInAgent(p, 'hal@example.com');
    const out = await post(p, '/api/v1/agents/sign-out', {}, { cookie: third.cookie, 'x-csrf-token': third.csrf });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()[0]).toMatch(/^parley_session=; .*Max-Age=0$/);
    expect((await get(p, '/api/v1/agents/me', { cookie: third.cookie })).status).toBe(401);
    expect((await get(p, '/api/v1/agents/me', { cookie: second.cookie })).status).toBe(200);
    const all = await post(p, '/api/v1/agents/sign-out-everywhere', {}, { cookie: first.cookie, 'x-csrf-token': first.csrf });
    expect(await all.json()).toEqual({ ended: 2 });
    expect((await get(p, '/api/v1/agents/me', { cookie: first.cookie })).status).toBe(401);
    expect((await get(p, '/api/v1/agents/me', { cookie: second.cookie })).status).toBe(401);
    expect((await get(p, '/api/v1/agents/me', { cookie: someoneElse.cookie })).status).toBe(200);
  });

  it('a session ends after the idle time without requests, and at its absolute end however active (test clock)', async () => {
    const p = await parley({ agents: { session_idle_minutes: 10, session_max_hours: 0.5 } });
    const a = await newSignedInAgent(p, 'ida@example.com');
    const idle = await sessionOf(p, 'ida@example.com');
    for (const minutes of [8, 16, 24]) {
      await setClock(p, minutes * 60_000);
      expect((await get(p, '/api/v1/agents/me', { cookie: a.cookie })).status).toBe(200);
    }
    expect((await get(p, '/api/v1/agents/me', { cookie: idle.cookie })).status).toBe(401);
    await setClock(p, 31 * 60_000);
    expect((await get(p, '/api/v1/agents/me', { cookie: a.cookie })).status).toBe(401);
  });

  it('personal API keys: shown once, work as Bearer without CSRF, listed without the secret, revocable', async () => {
    const p = await parley();
    const a = await newSignedInAgent(p, 'jo@example.com');
    const made = await post(p, '/api/v1/agents/me/keys', { name: 'my script' }, { cookie: a.cookie, 'x-csrf-token': a.csrf });
    expect(made.status).toBe(201);
    const { key, keyId } = await made.json();
    expect(key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    const bearer = { authorization: `Bearer ${key}` };
    expect(await (await get(p, '/api/v1/agents/me', bearer)).json()).toMatchObject({ agent: { agentId: a.agentId } });
    expect((await get(p, '/conversations?state=withHuman', bearer)).status).toBe(200);
    expect((await errorOf(await post(p, '/conversations/conv-x/handoff', {}, bearer))).code).toBe('conversation_not_found');
    const list = await (await get(p, '/api/v1/agents/me/keys', bearer)).json();
    expect(list).toEqual({ items: [{ keyId, name: 'my script', createdAt: expect.any(Number) }] });
    expect((await fetch(`${p.url()}/api/v1/agents/me/keys/${keyId}`, { method: 'DELETE', headers: bearer })).status).toBe(204);
    expect((await get(p, '/conversations?state=withHuman', bearer)).status).toBe(401);
    expect((await fetch(`${p.url()}/api/v1/agents/me/keys/${keyId}`, { method: 'DELETE', headers: { cookie: a.cookie, 'x-csrf-token': a.csrf } })).status).toBe(
      404,
    );
  });

  it('the set-password link is single-use and expires (test clock)', async () => {
    const p = await parley({ agents: { set_password_link_hours: 1 } });
    const { token } = await createAgent(p, { email: 'kim@example.com' });
    expect((await post(p, '/api/v1/agents/set-password', { token, password: PASSWORD })).status).toBe(200);
    const again = await post(p, '/api/v1/agents/set-password', { token, password: 'another password 2' });
    expect(again.status).toBe(410);
    expect((await errorOf(again)).code).toBe('link_used');
    expect((await signIn(p, 'kim@example.com', 'another password 2')).status).toBe(401);
    const late = await createAgent(p, { email: 'lee@example.com' });
    await setClock(p, 60 * 60_000 + 1000);
    const expired = await post(p, '/api/v1/agents/set-password', { token: late.token, password: PASSWORD });
    expect(expired.status).toBe(410);
    expect((await errorOf(expired)).code).toBe('link_expired');
    expect((await errorOf(await post(p, '/api/v1/agents/set-password', { token: 'pl_unknown', password: PASSWORD }))).code).toBe('link_unknown');
  });

  it('admins (and the service secret) create accounts; an agent may not; an email is taken in any case', async () => {
    const p = await parley();
    const admin = await newSignedInAgent(p, 'max@example.com', 'admin');
    const agent = await newSignedInAgent(p, 'ned@example.com', 'agent');
    const body = { name: 'Ola', email: 'ola@example.com', role: 'agent' };
    const refused = await post(p, '/api/v1/agents', body, { cookie: agent.cookie, 'x-csrf-token': agent.csrf });
    expect(refused.status).toBe(403);
    expect((await post(p, '/api/v1/agents', body, { cookie: admin.cookie })).status).toBe(403);
    expect((await post(p, '/api/v1/agents', body, { cookie: admin.cookie, 'x-csrf-token': admin.csrf })).status).toBe(201);
    const taken = await post(p, '/api/v1/agents', Object.assign({}, body, { email: 'OLA@example.com' }), asService);
    expect(taken.status).toBe(409);
    expect((await errorOf(taken)).code).toBe('email_taken');
    expect((await post(p, '/api/v1/agents', { name: 'x', email: 'not an email' }, asService)).status).toBe(400);
    const list = await (await get(p, '/api/v1/agents', { cookie: admin.cookie })).json();
    expect(list.items.map((a: { email: string }) => a.email)).toEqual(['max@example.com', 'ned@example.com', 'ola@example.com']);
  });
});
