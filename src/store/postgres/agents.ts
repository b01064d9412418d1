// Agent accounts on PostgreSQL: `agents` (unique lower-case email) and `agent_credentials` by the SHA-256 of the
// secret. Each row keeps its record as a JSON document beside the columns it is looked up by.
import type { AgentAccount, AgentCredential } from '../model.ts';
import type { AgentStore } from '../repos.ts';
import { first, json, prepared, type Db } from './db.ts';

const INSERT = prepared(
  'agents_insert',
  `INSERT INTO agents (agent_id, email_key, created_at, body) VALUES ($1, $2, $3, $4) ON CONFLICT (email_key) DO NOTHING RETURNING 1 AS ok`,
);
const GET = prepared('agents_get', 'SELECT body FROM agents WHERE agent_id = $1');
const BY_EMAIL = prepared('agents_by_email', 'SELECT body FROM agents WHERE email_key = $1');
const LIST = prepared('agents_list', 'SELECT body FROM agents ORDER BY created_at, agent_id');
// The email stays the one stored (its key is the uniqueness index).
const UPDATE = prepared('agents_update', `UPDATE agents SET body = $2::jsonb || jsonb_build_object('email', body->'email') WHERE agent_id = $1`);
const PUT_CREDENTIAL = prepared(
  'agents_put_credential',
  `INSERT INTO agent_credentials (hash, agent_id, kind, created_at, expires_at, body) VALUES ($1, $2, $3, $4, $5, $6)
   ON CONFLICT (hash) DO UPDATE SET agent_id = EXCLUDED.agent_id, kind = EXCLUDED.kind, created_at = EXCLUDED.created_at,
     expires_at = EXCLUDED.expires_at, body = EXCLUDED.body`,
);
const GET_CREDENTIAL = prepared('agents_get_credential', 'SELECT body FROM agent_credentials WHERE hash = $1');
// FOR UPDATE: a second consumer waits for the first one's transaction, then reads the row as it left it (used).
const LOCK_CREDENTIAL = prepared('agents_lock_credential', 'SELECT body FROM agent_credentials WHERE hash = $1 FOR UPDATE');
const REMOVE_CREDENTIAL = prepared('agents_remove_credential', 'DELETE FROM agent_credentials WHERE hash = $1 RETURNING 1 AS ok');
const CREDENTIALS = prepared('agents_credentials', 'SELECT hash, body FROM agent_credentials WHERE agent_id = $1 AND kind = $2 ORDER BY created_at, hash');
const REMOVE_CREDENTIALS = prepared(
  'agents_remove_credentials',
  'WITH gone AS (DELETE FROM agent_credentials WHERE agent_id = $1 AND kind = $2 RETURNING 1) SELECT count(*)::int AS n FROM gone',
);
const PRUNE = prepared(
  'agents_prune_credentials',
  'WITH gone AS (DELETE FROM agent_credentials WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS n FROM gone',
);

type Body<T> = { body: T };

export function postgresAgents(db: Db): AgentStore {
  const one = async <T>(s: Parameters<Db['rows']>[0], values: unknown[]) => (await first(db.rows<Body<T>>(s, values)))?.body;
  return {
    insert: async (a) => (await db.rows(INSERT, [a.agentId, a.email.toLowerCase(), a.createdAt, json(a)])).length === 1,
    get: (agentId) => one<AgentAccount>(GET, [agentId]),
    byEmail: (email) => one<AgentAccount>(BY_EMAIL, [email.toLowerCase()]),
    list: async () => (await db.rows<Body<AgentAccount>>(LIST, [])).map((r) => r.body),
    update: async (a) => {
      await db.rows(UPDATE, [a.agentId, json(a)]);
    },
    putCredential: async (hash, c) => {
      await db.rows(PUT_CREDENTIAL, [hash, c.agentId, c.kind, c.createdAt, c.expiresAt ?? null, json(c)]);
    },
    getCredential: (hash) => one<AgentCredential>(GET_CREDENTIAL, [hash]),
    lockCredential: (hash) => one<AgentCredential>(LOCK_CREDENTIAL, [hash]),
    removeCredential: async (hash) => (await db.rows(REMOVE_CREDENTIAL, [hash])).length === 1,
    credentials: async (agentId, kind) =>
      (await db.rows<{ hash: string; body: AgentCredential }>(CREDENTIALS, [agentId, kind])).map((r) => ({ hash: r.hash, credential: r.body })),
    removeCredentials: async (agentId, kind) => (await db.rows<{ n: number }>(REMOVE_CREDENTIALS, [agentId, kind]))[0].n,
    pruneCredentials: async (now) => (await db.rows<{ n: number }>(PRUNE, [now]))[0].n,
  };
}
