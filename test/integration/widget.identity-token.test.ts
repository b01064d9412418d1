// Identity tokens over the real widget socket (issue 32 part 1): a JWT the integrator's backend signs (here with jose,
// a third-party library, and with the SDK's signIdentity) signs a customer in with no customerId; Parley finds or
// creates the customer by externalId and names it in `ready`. Every forged kind is refused with `unauthorized` and
// close 4001, the reason in the log only. 300 sign-ins in a minute from one address for 50 customers all get `ready`.
import { createHmac } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, signIdentity } from '../../sdk/src/index.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

const SECRET = 'identity-secret-0123456789abcdef';
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function start(): Promise<TestParley> {
  const p = await startParley({ config: { identity: { jwt_secret: SECRET, allow_anonymous: false } } });
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

const joseToken = (sub: string, claims: Record<string, unknown> = {}, secret = SECRET) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const hmacSigned = (header: Record<string, unknown>, claims: Record<string, unknown>) => {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
};

describe('widget sign-in with identity tokens', () => {
  it('a jose-signed token signs in without customerId; the same sub is the same customer; tools see verified: true', async () => {
    const p = await start();
    const contexts: { customerId: string; externalId?: string; verified: boolean }[] = [];
    const sdk = createClient();
    sdk.expose('getOrderStatus', { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) }, ({ orderId }, ctx) => {
      contexts.push({ customerId: ctx.customerId, externalId: ctx.externalId, verified: ctx.verified });
      return { orderId, status: 'shipped' };
    });
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);

    const a = await init(p, { authToken: await joseToken('shop-user-1', { email: 'ada@example.com', name: 'Ada' }) });
    expect(a.first.type).toBe('ready');
    expect(a.first.customerId).toMatch(/^cus_/);
    expect(a.first.visitorToken).toBeUndefined();
    const customer = await p.services.store.customers.get(a.first.customerId);
    expect(customer).toMatchObject({ externalId: 'shop-user-1', email: 'ada@example.com' });

    const again = await init(p, { authToken: signIdentity({ externalId: 'shop-user-1' }, { secret: SECRET, expiresIn: 600 }) });
    expect(again.first).toMatchObject({ type: 'ready', customerId: a.first.customerId });
    // Naming the customer is allowed, when it is the token's.
    const named = await init(p, { customerId: a.first.customerId, authToken: await joseToken('shop-user-1') });
    expect(named.first.type).toBe('ready');

    a.w.send({ type: 'message', id: 'm1', text: 'where is order 1001?' });
    await a.w.next((f) => f.type === 'message' && f.role === 'assistant', 30_000);
    expect(contexts).toEqual([{ customerId: a.first.customerId, externalId: 'shop-user-1', verified: true }]);
  });

  it('refuses each forged kind with unauthorized and close 4001; the reason is in the log, not in the frame', async () => {
    const p = await start();
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: 'victim', iat: now, exp: now + 600 };
    const forged: [string, string][] = [
      ['alg none', new UnsecuredJWT(claims).encode()],
      ['RS256 header over the HMAC key', hmacSigned({ alg: 'RS256', typ: 'JWT' }, claims)],
      ['ES256 header over the HMAC key', hmacSigned({ alg: 'ES256' }, claims)],
      ['no exp', hmacSigned({ alg: 'HS256' }, { sub: 'victim', iat: now })],
      ['wrong signature', `${hmacSigned({ alg: 'HS256' }, claims).slice(0, -4)}AAAA`],
      ['another secret', await joseToken('victim', {}, 'some-other-secret-0123456789abcdef')],
      ['expired', hmacSigned({ alg: 'HS256' }, { sub: 'victim', iat: now - 7200, exp: now - 3600 })],
      ['too long-lived', hmacSigned({ alg: 'HS256' }, { sub: 'victim', iat: now, exp: now + 25 * 3600 })],
      ['reserved sub', hmacSigned({ alg: 'HS256' }, { sub: 'visitor:abc', iat: now, exp: now + 600 })],
    ];
    for (const [kind, token] of forged) {
      const { w, first } = await init(p, { authToken: token });
      expect(first, kind).toEqual({ type: 'error', code: 'unauthorized', message: 'Sign-in refused' });
      expect((await w.closed).code, kind).toBe(4001);
    }
    const reasons = p.logs.filter((l) => l.includes('widget sign-in refused')).map((l) => JSON.parse(l).why as string);
    expect(reasons).toEqual([
      'identity token: malformed',
      'identity token: bad_header',
      'identity token: bad_header',
      'identity token: no_exp',
      'identity token: bad_signature',
      'identity token: bad_signature',
      'identity token: expired',
      'identity token: too_long_lived',
      'identity token: reserved sub',
    ]);
    expect(await p.services.store.customers.findBy('ext', 'victim')).toBeUndefined();
    // A customerId that is not the token's is refused too.
    const other = await init(p, { authToken: await joseToken('someone') });
    const mismatch = await init(p, { customerId: 'cus_not-theirs', authToken: await joseToken('another') });
    expect(other.first.type).toBe('ready');
    expect(mismatch.first).toMatchObject({ type: 'error', code: 'unauthorized' });
  });

  it('300 sign-ins within a minute from one address for 50 customers all get ready', async () => {
    const p = await start();
    const tokens = await Promise.all(Array.from({ length: 50 }, (_, i) => joseToken(`load-${i}`)));
    const started = Date.now();
    const ids = new Map<string, string>();
    let readies = 0;
    // 20 at a time, like page views arriving together.
    for (let batch = 0; batch < 300; batch += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, j) => {
          const n = (batch + j) % 50;
          const w = await connectWidget(p.url());
          try {
            w.send({ type: 'init', authToken: tokens[n] });
            const f = await w.next((x) => x.type === 'ready' || x.type === 'error', 30_000);
            expect(f.type, JSON.stringify(f)).toBe('ready');
            readies++;
            if (ids.has(`load-${n}`)) expect(f.customerId).toBe(ids.get(`load-${n}`));
            else ids.set(`load-${n}`, f.customerId);
          } finally {
            w.close();
          }
        }),
      );
    }
    const tookMs = Date.now() - started;
    expect(readies).toBe(300);
    expect(new Set(ids.values()).size).toBe(50);
    console.info(`identity-token sign-ins: 300 in ${tookMs} ms`);
  });
});
