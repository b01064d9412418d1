// Magic links on LMDB: `magicLinks` SHA-256(token) → link.
import type { MagicLink } from '../../model.ts';
import type { MagicLinkStore } from '../../repos.ts';
import type { KvScope } from '../kv.ts';

export function lmdbLinks(s: KvScope): MagicLinkStore {
  const expired = (now: number) => [...s.range<MagicLink>('magicLinks')].filter(({ value }) => value.expiresAt <= now).map(({ key }) => key);
  return {
    insert: (hash, link) => s.put('magicLinks', hash, link),
    lock: async (hash) => s.get<MagicLink>('magicLinks', hash),
    markUsed: (hash, at) =>
      s.atomically(async (tx) => {
        const link = tx.get<MagicLink>('magicLinks', hash);
        if (link) await tx.put('magicLinks', hash, Object.assign({}, link, { usedAt: at }));
      }),
    pruneExpired: async (now) => {
      // Read first: most ticks find nothing, and need no write transaction (nor its flush).
      if (expired(now).length === 0) return 0;
      return s.atomically(async (tx) => {
        const keys = expired(now);
        for (const key of keys) await tx.remove('magicLinks', key);
        return keys.length;
      });
    },
  };
}
