import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createMagicLinks, hashToken } from '../../src/identity/magic-links.ts';
import { createSessionTokens } from '../../src/identity/session-token.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

describe('session tokens', () => {
  it('valid until exactly the TTL, bound to the customer', () => {
    const clock = createManualClock(1_000_000);
    const t = createSessionTokens({ serviceSecret: 's', ttlMinutes: 60, clock });
    const token = t.issue('cus_1');
    expect(t.verify(token, 'cus_1')).toMatchObject({ ok: true, customerId: 'cus_1' });
    expect(t.verify(token, 'cus_2')).toEqual({ ok: false, reason: 'wrong_customer' });
    clock.advance(3600_000 - 1);
    expect(t.verify(token, 'cus_1').ok).toBe(true);
    clock.advance(1);
    expect(t.verify(token, 'cus_1')).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses tampering, other keys and garbage', () => {
    const clock = createManualClock(1_000_000);
    const t = createSessionTokens({ serviceSecret: 's', ttlMinutes: 60, clock });
    const token = t.issue('cus_1');
    const [v, p, sig] = token.split('.');
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expect(t.verify(`${v}.${p}.${flipped}`, 'cus_1')).toEqual({ ok: false, reason: 'bad_signature' });
    expect(t.verify(`${v}.${p}x.${sig}`, 'cus_1')).toEqual({ ok: false, reason: 'bad_signature' });
    expect(createSessionTokens({ serviceSecret: 'other', ttlMinutes: 60, clock }).verify(token, 'cus_1')).toEqual({ ok: false, reason: 'bad_signature' });
    expect(createSessionTokens({ serviceSecret: 's', tokenSecret: 'explicit', ttlMinutes: 60, clock }).verify(token, 'cus_1')).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    for (const bad of ['', 'v1', 'v1..', 'v2.a.b', 'x.y.z.w']) expect(t.verify(bad, 'cus_1')).toEqual({ ok: false, reason: 'malformed' });
  });
});

describe('magic links', () => {
  it('single use, even under concurrency; expire; stored only as hashes', async () => {
    const path = tempDir();
    const store = await openTestStore(path);
    const clock = createManualClock(1_000_000);
    const links = createMagicLinks({ store, clock, ttlMinutes: 15 });
    const token = await links.create({ email: 'a@example.com', externalId: 'a' });
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const results = await Promise.all(Array.from({ length: 20 }, () => links.consume(token)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.reason === 'used')).toHaveLength(19);
    // Nowhere in the data file: only its hash.
    await store.flushed();
    const stored = readFileSync(join(path, 'data.mdb'));
    expect(stored.includes(token)).toBe(false);
    expect(stored.includes(hashToken(token))).toBe(true);
    const late = await links.create({ email: 'b@example.com', externalId: 'b' });
    clock.advance(15 * 60_000 - 1);
    const early = await links.create({ email: 'c@example.com', externalId: 'c' });
    clock.advance(1);
    expect(await links.consume(late)).toEqual({ ok: false, reason: 'expired' });
    expect((await links.consume(early)).ok).toBe(true);
    expect(await links.consume('nope')).toEqual({ ok: false, reason: 'unknown' });
    clock.advance(15 * 60_000);
    expect(await links.prune()).toBe(3);
    await store.close();
  });
});
