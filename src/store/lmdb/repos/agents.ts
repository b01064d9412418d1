// Agent accounts on LMDB: `agents` agentId → account, `agentEmails` lower-case email → agentId (the uniqueness
// index), `agentCredentials` SHA-256(secret) → credential. A team holds tens of agents and a few credentials each:
// the per-agent reads scan the credentials table.
import type { AgentAccount, AgentCredential, AgentCredentialKind } from '../../model.ts';
import type { AgentStore } from '../../repos.ts';
import type { KvScope } from '../kv.ts';

const emailKey = (email: string) => email.toLowerCase();

export function lmdbAgents(s: KvScope): AgentStore {
  const matching = (pick: (c: AgentCredential) => boolean) =>
    [...s.range<AgentCredential>('agentCredentials')].filter(({ value }) => pick(value)).map(({ key, value }) => ({ hash: key as string, credential: value }));
  const removeAll = async (pick: (c: AgentCredential) => boolean) => {
    // Read first: most calls find nothing and need no write transaction.
    if (matching(pick).length === 0) return 0;
    return s.atomically(async (tx) => {
      const found = [...tx.range<AgentCredential>('agentCredentials')].filter(({ value }) => pick(value));
      for (const { key } of found) await tx.remove('agentCredentials', key);
      return found.length;
    });
  };
  return {
    insert: (agent) =>
      s.atomically(async (tx) => {
        if (tx.get<string>('agentEmails', emailKey(agent.email)) !== undefined) return false;
        await tx.put('agentEmails', emailKey(agent.email), agent.agentId);
        await tx.put('agents', agent.agentId, agent);
        return true;
      }),
    get: async (agentId) => s.get<AgentAccount>('agents', agentId),
    byEmail: async (email) => {
      const id = s.get<string>('agentEmails', emailKey(email));
      return id === undefined ? undefined : s.get<AgentAccount>('agents', id);
    },
    list: async () => [...s.range<AgentAccount>('agents')].map(({ value }) => value).sort((a, b) => a.createdAt - b.createdAt),
    update: (agent) =>
      s.atomically(async (tx) => {
        const known = tx.get<AgentAccount>('agents', agent.agentId);
        if (known) await tx.put('agents', agent.agentId, Object.assign({}, agent, { email: known.email }));
      }),
    putCredential: (hash, c) => s.put('agentCredentials', hash, c),
    getCredential: async (hash) => s.get<AgentCredential>('agentCredentials', hash),
    lockCredential: async (hash) => s.get<AgentCredential>('agentCredentials', hash),
    removeCredential: (hash) =>
      s.atomically(async (tx) => {
        if (tx.get('agentCredentials', hash) === undefined) return false;
        await tx.remove('agentCredentials', hash);
        return true;
      }),
    credentials: async (agentId, kind: AgentCredentialKind) =>
      matching((c) => c.agentId === agentId && c.kind === kind).sort((a, b) => a.credential.createdAt - b.credential.createdAt),
    removeCredentials: (agentId, kind) => removeAll((c) => c.agentId === agentId && c.kind === kind),
    pruneCredentials: (now) => removeAll((c) => c.expiresAt !== undefined && c.expiresAt <= now),
  };
}
