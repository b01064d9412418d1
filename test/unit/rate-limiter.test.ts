import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createRateLimiter } from '../../src/limits/rate-limiter.ts';
import { safeEqual, hasServiceSecret } from '../../src/http/auth.ts';

describe('rate limiter', () => {
  it('allows a burst, then refuses with the time until the next token', () => {
    const clock = createManualClock();
    const rl = createRateLimiter({ perMinute: 60, burst: 3, now: clock.now });
    expect([rl.take('a').ok, rl.take('a').ok, rl.take('a').ok]).toEqual([true, true, true]);
    const refused = rl.take('a');
    expect(refused).toEqual({ ok: false, retryAfterMs: 1000 });
    expect(rl.take('b').ok).toBe(true);
    clock.advance(1000);
    expect(rl.take('a').ok).toBe(true);
    expect(rl.take('a').ok).toBe(false);
  });

  it('keeps memory bounded', () => {
    const clock = createManualClock();
    const rl = createRateLimiter({ perMinute: 1, now: clock.now, maxKeys: 100 });
    for (let i = 0; i < 1000; i++) rl.take(`k${i}`);
    expect(rl.size()).toBeLessThanOrEqual(100);
  });
});

describe('service secret check', () => {
  it('compares exactly', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', 'x')).toBe(false);
  });
  it('accepts Bearer or x-service-secret, nothing else', () => {
    expect(hasServiceSecret({ authorization: 'Bearer s3' }, 's3')).toBe(true);
    expect(hasServiceSecret({ authorization: 'bearer s3' }, 's3')).toBe(true);
    expect(hasServiceSecret({ 'x-service-secret': 's3' }, 's3')).toBe(true);
    expect(hasServiceSecret({ authorization: 'Basic s3' }, 's3')).toBe(false);
    expect(hasServiceSecret({ authorization: 'Bearer s4' }, 's3')).toBe(false);
    expect(hasServiceSecret({}, 's3')).toBe(false);
  });
});
