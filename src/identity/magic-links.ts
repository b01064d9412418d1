// Magic links: 32 random bytes, stored only as their SHA-256, single use
// (the link is locked, checked and marked used in one transaction), expiring after the TTL.
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Store } from '../store/repos.ts';

export type ConsumeResult = { ok: true; email: string; externalId: string } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

export interface MagicLinks {
  create(fields: { email: string; externalId: string }): Promise<string>;
  consume(token: string): Promise<ConsumeResult>;
  /** Deletes expired links; returns how many. */
  prune(): Promise<number>;
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function createMagicLinks(o: { store: Store; clock: Clock; ttlMinutes: number }): MagicLinks {
  const ttlMs = Math.round(o.ttlMinutes * 60_000);
  return {
    async create({ email, externalId }) {
      const token = randomBytes(32).toString('base64url');
      await o.store.links.insert(hashToken(token), { email, externalId, expiresAt: o.clock.now() + ttlMs });
      return token;
    },
    consume(token) {
      const hash = hashToken(token);
      return o.store.transaction(async ({ links }): Promise<ConsumeResult> => {
        const link = await links.lock(hash);
        if (!link) return { ok: false, reason: 'unknown' };
        if (link.usedAt !== undefined) return { ok: false, reason: 'used' };
        const now = o.clock.now();
        if (now >= link.expiresAt) return { ok: false, reason: 'expired' };
        await links.markUsed(hash, now);
        return { ok: true, email: link.email, externalId: link.externalId };
      });
    },
    // Used links are kept until they would have expired, so reuse stays "used", not "unknown".
    prune: () => o.store.links.pruneExpired(o.clock.now()),
  };
}
