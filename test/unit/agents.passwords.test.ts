// Issue 35: agent passwords (scrypt with its parameters stored), tokens stored by hash, cookies.
import { describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '../../src/agents/passwords.ts';
import { newToken, tokenHash } from '../../src/agents/tokens.ts';
import { readCookie } from '../../src/agents/cookies.ts';

describe('agent passwords', () => {
  it('scrypt with N=2^15, r=8, p=1 and a 16-byte salt, stored with the hash; the right password verifies, others do not', async () => {
    const stored = await hashPassword('correct horse battery');
    const [name, N, r, p, salt, key] = stored.split('$');
    expect([name, N, r, p]).toEqual(['scrypt', '32768', '8', '1']);
    expect(Buffer.from(salt, 'base64url')).toHaveLength(16);
    expect(Buffer.from(key, 'base64url')).toHaveLength(32);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('two hashes of one password differ (random salt)', async () => {
    expect(await hashPassword('same password')).not.toBe(await hashPassword('same password'));
  });

  it('a hash made with other parameters still verifies with its own, and asks to be made again when weaker', async () => {
    const weak = await hashPassword('pw-0123456789', { N: 2 ** 10, r: 8, p: 1 });
    expect(weak.startsWith('scrypt$1024$8$1$')).toBe(true);
    expect(await verifyPassword('pw-0123456789', weak)).toBe(true);
    expect(needsRehash(weak)).toBe(true);
    expect(needsRehash(await hashPassword('pw-0123456789'))).toBe(false);
  });

  it('a malformed stored hash matches nothing', async () => {
    for (const bad of ['', 'scrypt$x$8$1$aa$bb', 'bcrypt$1$2$3$4$5', 'scrypt$1024$8$1$c2FsdA$c2hvcnQ'])
      expect(await verifyPassword('anything', bad)).toBe(false);
  });
});

describe('agent tokens and cookies', () => {
  it('tokens are 32 random bytes with their prefix, stored as their SHA-256', () => {
    const t = newToken('ps_');
    expect(t).toMatch(/^ps_[A-Za-z0-9_-]{43}$/);
    expect(newToken('ps_')).not.toBe(t);
    expect(tokenHash(t)).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenHash(t)).not.toContain(t.slice(3));
  });

  it('reads one cookie from a Cookie header', () => {
    expect(readCookie('a=1; parley_session=ps_x; b=2', 'parley_session')).toBe('ps_x');
    expect(readCookie('xparley_session=1', 'parley_session')).toBeUndefined();
    expect(readCookie(undefined, 'parley_session')).toBeUndefined();
  });
});
