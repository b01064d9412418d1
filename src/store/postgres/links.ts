// Magic links on PostgreSQL, by the SHA-256 of their token.
import type { MagicLink } from '../model.ts';
import type { MagicLinkStore } from '../repos.ts';
import { first, prepared, type Db } from './db.ts';

interface LinkRow {
  email: string;
  external_id: string;
  expires_at: number;
  used_at: number | null;
}

const INSERT = prepared(
  'links_insert',
  `INSERT INTO magic_links (token_hash, email, external_id, expires_at, used_at) VALUES ($1, $2, $3, $4, $5)
   ON CONFLICT (token_hash) DO UPDATE SET email = EXCLUDED.email, external_id = EXCLUDED.external_id,
     expires_at = EXCLUDED.expires_at, used_at = EXCLUDED.used_at`,
);
// FOR UPDATE: a second consumer waits for the first one's transaction, then reads the row as it left it (used).
const LOCK = prepared('links_lock', 'SELECT email, external_id, expires_at, used_at FROM magic_links WHERE token_hash = $1 FOR UPDATE');
const MARK_USED = prepared('links_mark_used', 'UPDATE magic_links SET used_at = $2 WHERE token_hash = $1');
const PRUNE = prepared('links_prune', 'WITH gone AS (DELETE FROM magic_links WHERE expires_at <= $1 RETURNING 1) SELECT count(*) AS n FROM gone');

function toLink(r: LinkRow | undefined): MagicLink | undefined {
  if (!r) return undefined;
  const link: MagicLink = { email: r.email, externalId: r.external_id, expiresAt: r.expires_at };
  if (r.used_at !== null) link.usedAt = r.used_at;
  return link;
}

export function postgresLinks(db: Db): MagicLinkStore {
  return {
    insert: async (tokenHash, l) => {
      await db.rows(INSERT, [tokenHash, l.email, l.externalId, l.expiresAt, l.usedAt ?? null]);
    },
    lock: async (tokenHash) => toLink(await first(db.rows<LinkRow>(LOCK, [tokenHash]))),
    markUsed: async (tokenHash, at) => {
      await db.rows(MARK_USED, [tokenHash, at]);
    },
    pruneExpired: async (now) => (await db.rows<{ n: number }>(PRUNE, [now]))[0].n,
  };
}
