// Identity tokens (src/identity/identity-token.ts): HS256 JWTs signed by the integrator, checked against an injected
// clock. Tokens signed by a third-party library (jose) and by the SDK's signIdentity are accepted; each forged kind is
// refused with its reason; the SDK's tokens verify with jose too.
import { createHmac } from 'node:crypto';
import { jwtVerify, SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { signIdentity } from '../../sdk/src/index.ts';
import { createManualClock } from '../../src/clock.ts';
import { createIdentityTokens, looksLikeJwt } from '../../src/identity/identity-token.ts';

const SECRET = 'identity-secret-0123456789abcdef';
const PREVIOUS = 'previous-secret-0123456789abcdef';
const START = Date.UTC(2026, 10, 27, 9, 0, 0);
const sec = (ms: number) => Math.floor(ms / 1000);
const key = (s: string) => new TextEncoder().encode(s);

function setup(maxLifetimeHours = 24) {
  const clock = createManualClock(START);
  const tokens = createIdentityTokens({ secrets: [SECRET, PREVIOUS], maxLifetimeHours, clock });
  return { clock, tokens };
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
/** A token with any header, HMAC-signed with `secret` (what an attacker who knows no secret cannot do, but a confused verifier might accept). */
function handMade(header: Record<string, unknown>, claims: Record<string, unknown>, secret = SECRET): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const joseToken = (claims: Record<string, unknown>, o: { secret?: string; exp?: number; sub?: string } = {}) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(o.sub ?? 'user-42')
    .setIssuedAt(sec(START))
    .setExpirationTime(o.exp ?? sec(START) + 3600)
    .sign(key(o.secret ?? SECRET));

describe('identity tokens', () => {
  it('accepts a token signed by jose (a third-party library), with its optional claims', async () => {
    const { tokens } = setup();
    const token = await joseToken({ email: 'ada@example.com', name: 'Ada', phone: '+15550001111' });
    expect(looksLikeJwt(token)).toBe(true);
    expect(tokens.verify(token)).toEqual({
      ok: true,
      claims: { externalId: 'user-42', email: 'ada@example.com', name: 'Ada', phone: '+15550001111', expiresAt: (sec(START) + 3600) * 1000 },
    });
  });

  it("accepts the SDK's signIdentity tokens, which jose verifies as well", async () => {
    const { tokens } = setup();
    const token = signIdentity({ externalId: 'user-7', email: 'g@example.com' }, { secret: SECRET, expiresIn: 600, now: START });
    expect(tokens.verify(token)).toMatchObject({ ok: true, claims: { externalId: 'user-7', email: 'g@example.com' } });
    const { payload, protectedHeader } = await jwtVerify(token, key(SECRET), { algorithms: ['HS256'], currentDate: new Date(START) });
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toEqual({ sub: 'user-7', email: 'g@example.com', iat: sec(START), exp: sec(START) + 600 });
  });

  it('accepts the previous secret during a rotation, and no other', async () => {
    const { tokens } = setup();
    expect(tokens.verify(await joseToken({}, { secret: PREVIOUS })).ok).toBe(true);
    expect(tokens.verify(await joseToken({}, { secret: 'another-secret-0123456789abcdef' }))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses alg none, RS256/ES256 headers over the HMAC key, unknown header members and a tampered payload', async () => {
    const { tokens } = setup();
    const claims = { sub: 'user-42', iat: sec(START), exp: sec(START) + 3600 };
    expect(tokens.verify(new UnsecuredJWT(claims).encode())).toEqual({ ok: false, reason: 'malformed' });
    expect(tokens.verify(`${b64({ alg: 'none' })}.${b64(claims)}.${'A'.repeat(43)}`)).toEqual({ ok: false, reason: 'bad_header' });
    expect(tokens.verify(handMade({ alg: 'RS256', typ: 'JWT' }, claims))).toEqual({ ok: false, reason: 'bad_header' });
    expect(tokens.verify(handMade({ alg: 'ES256' }, claims))).toEqual({ ok: false, reason: 'bad_header' });
    expect(tokens.verify(handMade({ alg: 'hs256' }, claims))).toEqual({ ok: false, reason: 'bad_header' });
    expect(tokens.verify(handMade({ alg: 'HS256', jku: 'https://evil.example/keys' }, claims))).toEqual({ ok: false, reason: 'bad_header' });
    expect(tokens.verify(handMade({ alg: 'HS256', kid: 'k1' }, claims)).ok).toBe(true);
    const good = handMade({ alg: 'HS256' }, claims);
    const [h, , s] = good.split('.');
    expect(tokens.verify(`${h}.${b64({ ...claims, sub: 'someone-else' })}.${s}`)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(tokens.verify(`${good}x`)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(tokens.verify('not a token')).toEqual({ ok: false, reason: 'malformed' });
  });

  it('requires sub and exp; refuses an exp further ahead than the maximum lifetime, and an expired one', async () => {
    const { tokens, clock } = setup(24);
    const now = sec(START);
    expect(tokens.verify(handMade({ alg: 'HS256' }, { sub: 'u', iat: now }))).toEqual({ ok: false, reason: 'no_exp' });
    expect(tokens.verify(handMade({ alg: 'HS256' }, { exp: now + 60 }))).toEqual({ ok: false, reason: 'bad_claims' });
    expect(tokens.verify(handMade({ alg: 'HS256' }, { sub: 'u', exp: String(now + 60) }))).toEqual({ ok: false, reason: 'bad_claims' });
    expect(tokens.verify(handMade({ alg: 'HS256' }, { sub: 'u', exp: now + 60, email: 42 }))).toEqual({ ok: false, reason: 'bad_claims' });
    expect(tokens.verify(await joseToken({}, { exp: now + 24 * 3600 + 60 }))).toEqual({ ok: false, reason: 'too_long_lived' });
    const day = await joseToken({}, { exp: now + 24 * 3600 });
    expect(tokens.verify(day).ok).toBe(true);
    expect(tokens.verify(handMade({ alg: 'HS256' }, { sub: 'u', exp: now + 60, nbf: now + 30 }))).toEqual({ ok: false, reason: 'not_yet_valid' });
    clock.advance(24 * 3600 * 1000);
    expect(tokens.verify(day)).toEqual({ ok: false, reason: 'expired' });
  });

  it('accepts nothing when no secret is configured', async () => {
    const tokens = createIdentityTokens({ secrets: ['', ''], maxLifetimeHours: 24, clock: createManualClock(START) });
    expect(tokens.enabled).toBe(false);
    expect(tokens.verify(await joseToken({}))).toEqual({ ok: false, reason: 'not_configured' });
  });
});
