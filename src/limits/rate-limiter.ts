// Token buckets keyed by a string (IP, email, customer). In memory, per
// process; idle buckets are dropped so memory stays bounded.
export interface RateLimiter {
  /** Takes one token; when none is left, says how long until one is. */
  take(key: string): { ok: true } | { ok: false; retryAfterMs: number };
  size(): number;
}

export function createRateLimiter(o: { perMinute: number; burst?: number; now: () => number; maxKeys?: number }): RateLimiter {
  const capacity = o.burst ?? o.perMinute;
  const refillPerMs = o.perMinute / 60_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  const maxKeys = o.maxKeys ?? 100_000;
  return {
    take(key) {
      const now = o.now();
      let b = buckets.get(key);
      if (!b) {
        if (buckets.size >= maxKeys) {
          // Drop the oldest entries (Map keeps insertion order).
          for (const k of buckets.keys()) {
            buckets.delete(k);
            if (buckets.size < maxKeys * 0.9) break;
          }
        }
        b = { tokens: capacity, at: now };
        buckets.set(key, b);
      }
      b.tokens = Math.min(capacity, b.tokens + Math.max(0, now - b.at) * refillPerMs);
      b.at = now;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return { ok: true };
      }
      return { ok: false, retryAfterMs: Math.ceil((1 - b.tokens) / refillPerMs) };
    },
    size: () => buckets.size,
  };
}
