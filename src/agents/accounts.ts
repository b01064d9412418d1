// Agent accounts: created (by the CLI or an admin) with a one-time set-password link, the password set through it.
// Links are single use (locked, checked and marked used in one transaction) and expire.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { AgentAccount, AgentRole } from '../store/model.ts';
import type { Store } from '../store/repos.ts';
import { hashPassword } from './passwords.ts';
import { newToken, tokenHash } from './tokens.ts';

export type CreateResult = { ok: true; agent: AgentAccount; setPasswordToken: string } | { ok: false; code: 'email_taken' };
export type SetPasswordResult = { ok: true; agent: AgentAccount } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

/** What an account looks like outside the store: never its password hash. */
export type PublicAgent = Omit<AgentAccount, 'passwordHash'> & { hasPassword: boolean };

export function publicAgent(a: AgentAccount): PublicAgent {
  const { passwordHash, ...rest } = a;
  return Object.assign(rest, { hasPassword: passwordHash !== undefined });
}

/** The path of a set-password link (the dashboard serves it). */
export const setPasswordPath = (token: string) => `/agents/set-password?token=${encodeURIComponent(token)}`;

export interface AgentAccounts {
  create(fields: { name: string; email: string; role: AgentRole }): Promise<CreateResult>;
  /** A new set-password link for an existing account (e.g. a forgotten password), or undefined. */
  newSetPasswordLink(agentId: string): Promise<string | undefined>;
  setPassword(token: string, password: string): Promise<SetPasswordResult>;
}

export function createAgentAccounts(o: { store: Store; clock: Clock; linkTtlMs: number }): AgentAccounts {
  const { store, clock } = o;
  const link = async (agentId: string) => {
    const token = newToken('pl_');
    const now = clock.now();
    await store.agents.putCredential(tokenHash(token), { kind: 'setPassword', agentId, createdAt: now, expiresAt: now + o.linkTtlMs });
    return token;
  };
  return {
    async create({ name, email, role }) {
      const agent: AgentAccount = { agentId: `ag_${randomUUID()}`, name, email, role, disabled: false, createdAt: clock.now() };
      if (!(await store.agents.insert(agent))) return { ok: false, code: 'email_taken' };
      return { ok: true, agent, setPasswordToken: await link(agent.agentId) };
    },
    async newSetPasswordLink(agentId) {
      return (await store.agents.get(agentId)) ? link(agentId) : undefined;
    },
    async setPassword(token, password) {
      // Hashed before the transaction: nothing slow runs while the link is locked.
      const passwordHash = await hashPassword(password);
      const hash = tokenHash(token);
      return store.transaction(async (tx): Promise<SetPasswordResult> => {
        const c = await tx.agents.lockCredential(hash);
        if (!c || c.kind !== 'setPassword') return { ok: false, reason: 'unknown' };
        if (c.usedAt !== undefined) return { ok: false, reason: 'used' };
        const now = clock.now();
        if (c.expiresAt === undefined || now >= c.expiresAt) return { ok: false, reason: 'expired' };
        const agent = await tx.agents.get(c.agentId);
        if (!agent) return { ok: false, reason: 'unknown' };
        await tx.agents.putCredential(hash, Object.assign({}, c, { usedAt: now }));
        const updated = Object.assign({}, agent, { passwordHash });
        await tx.agents.update(updated);
        // A new password ends every session signed in with the old one.
        await tx.agents.removeCredentials(agent.agentId, 'session');
        return { ok: true, agent: updated };
      });
    },
  };
}
