// Magic links: 32 random bytes, stored only as their SHA-256, single use
// (enforced inside one LMDB transaction), expiring after the TTL.
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Store } from '../store/types.ts';

interface LinkRecord {
  email: string;
  externalId: string;
  expiresAt: number;
  usedAt?: number;
}

export type ConsumeResult = { ok: true; email: string; externalId: string } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

export interface MagicLinks {
  create(fields: { email: string; externalId: string }): Promise<string>;
  consume(token: string): Promise<ConsumeResult>;
  /** Deletes expired links; returns how many. */
  prune(): Promise<number>;
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function createMagicLinks(o: { store: Store; clock: Clock; ttlMinutes: number }): MagicLinks {
  const links = o.store.table<LinkRecord>('magicLinks');
  const ttlMs = Math.round(o.ttlMinutes * 60_000);
  return {
    async create({ email, externalId }) {
      const token = randomBytes(32).toString('base64url');
      await links.put(hashToken(token), { email, externalId, expiresAt: o.clock.now() + ttlMs });
      return token;
    },
    consume(token) {
      const key = hashToken(token);
      return o.store.transaction((): ConsumeResult => {
        const link = links.get(key);
        if (!link) return { ok: false, reason: 'unknown' };
        if (link.usedAt !== undefined) return { ok: false, reason: 'used' };
        if (o.clock.now() >= link.expiresAt) return { ok: false, reason: 'expired' };
        links.putInTx(key, Object.assign({}, link, { usedAt: o.clock.now() }));
        return { ok: true, email: link.email, externalId: link.externalId };
      });
    },
    async prune() {
      // Used links are kept until they would have expired, so reuse stays "used", not "unknown".
      const expired = (now: number) => [...links.range()].filter(({ value }) => value.expiresAt <= now).map(({ key }) => key);
      // Read first: most ticks find nothing, and need no write transaction (nor its flush).
      if (expired(o.clock.now()).length === 0) return 0;
      return o.store.transaction(() => {
        const keys = expired(o.clock.now());
        for (const key of keys) links.removeInTx(key);
        return keys.length;
      });
    },
  };
}
