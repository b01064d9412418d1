// Sign-in sessions and personal API keys. A session is a random 32-byte token (stored as its SHA-256) with an idle
// and an absolute expiry. Its CSRF token is HMAC-SHA256(key, the session's hash): bound to that one session, never
// stored, given at sign-in and by GET /api/v1/agents/me (a page on another site can read neither), and required in
// `X-CSRF-Token` on every state-changing request made with the cookie, compared in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { AgentAccount, AgentCredential } from '../store/model.ts';
import type { Store } from '../store/repos.ts';
import { createDummyHash, hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import { newId, newToken, tokenHash } from './tokens.ts';

/** lastSeenAt is written at most this often (not on every request). */
const TOUCH_EVERY_MS = 60_000;

export interface SessionPolicy {
  idleMs: number;
  maxMs: number;
}

export interface NewSession {
  agent: AgentAccount;
  sessionToken: string;
  csrfToken: string;
  expiresAt: number;
}

export interface SessionHit {
  agent: AgentAccount;
  hash: string;
  credential: AgentCredential;
}

export interface KeyInfo {
  keyId: string;
  name: string;
  createdAt: number;
}

export interface AgentSessions {
  /** The new session, or undefined: unknown email, no password yet, a wrong password or a disabled account. */
  signIn(email: string, password: string): Promise<NewSession | undefined>;
  /** The live session and its enabled agent, or undefined (also when it has expired: it is then removed). */
  session(token: string): Promise<SessionHit | undefined>;
  /** The session's CSRF token. */
  csrfToken(hit: Pick<SessionHit, 'hash'>): string;
  /** Whether `csrf` is this session's CSRF token (constant time). */
  csrfMatches(hit: SessionHit, csrf: string | undefined): boolean;
  signOut(token: string): Promise<void>;
  /** Ends every session of the agent; resolves with how many. */
  signOutEverywhere(agentId: string): Promise<number>;
  createKey(agentId: string, name: string): Promise<KeyInfo & { key: string }>;
  keys(agentId: string): Promise<KeyInfo[]>;
  revokeKey(agentId: string, keyId: string): Promise<boolean>;
  /** The enabled agent that holds this key, or undefined. */
  keyOwner(key: string): Promise<AgentAccount | undefined>;
}

/** `csrfKey`: the HMAC key of CSRF tokens (read on each use, so a rotated secret takes effect). */
export function createAgentSessions(o: { store: Store; clock: Clock; policy: SessionPolicy; csrfKey: () => string }): AgentSessions {
  const { store, clock, policy } = o;
  const csrfBytes = (hash: string) => createHmac('sha256', `parley-agent-csrf:${o.csrfKey()}`).update(hash).digest();
  const csrfToken = (hit: Pick<SessionHit, 'hash'>) => `pc_${csrfBytes(hit.hash).toString('base64url')}`;
  const dummy = createDummyHash();
  const live = (a: AgentAccount | undefined) => (a && !a.disabled ? a : undefined);
  return {
    async signIn(email, password) {
      const agent = await store.agents.byEmail(email);
      // Unknown and password-less accounts cost one scrypt too: the time taken does not tell them apart.
      const ok = await verifyPassword(password, agent?.passwordHash ?? (await dummy()));
      if (!agent?.passwordHash || !ok || agent.disabled) return undefined;
      if (needsRehash(agent.passwordHash)) await store.agents.update(Object.assign({}, agent, { passwordHash: await hashPassword(password) }));
      const sessionToken = newToken('ps_');
      const now = clock.now();
      const expiresAt = now + policy.maxMs;
      await store.agents.putCredential(tokenHash(sessionToken), {
        kind: 'session',
        agentId: agent.agentId,
        createdAt: now,
        expiresAt,
        lastSeenAt: now,
      });
      return { agent, sessionToken, csrfToken: csrfToken({ hash: tokenHash(sessionToken) }), expiresAt };
    },
    async session(token) {
      const hash = tokenHash(token);
      const c = await store.agents.getCredential(hash);
      if (!c || c.kind !== 'session') return undefined;
      const now = clock.now();
      if ((c.expiresAt !== undefined && now >= c.expiresAt) || now - (c.lastSeenAt ?? c.createdAt) >= policy.idleMs) {
        await store.agents.removeCredential(hash);
        return undefined;
      }
      const agent = live(await store.agents.get(c.agentId));
      if (!agent) return undefined;
      if (now - (c.lastSeenAt ?? c.createdAt) >= TOUCH_EVERY_MS) await store.agents.putCredential(hash, Object.assign({}, c, { lastSeenAt: now }));
      return { agent, hash, credential: c };
    },
    csrfToken,
    csrfMatches(hit, csrf) {
      if (typeof csrf !== 'string' || !csrf.startsWith('pc_')) return false;
      const given = Buffer.from(csrf.slice(3), 'base64url');
      const expected = csrfBytes(hit.hash);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    async signOut(token) {
      await store.agents.removeCredential(tokenHash(token));
    },
    signOutEverywhere: (agentId) => store.agents.removeCredentials(agentId, 'session'),
    async createKey(agentId, name) {
      const key = newToken('pk_');
      const info: KeyInfo = { keyId: newId('key_'), name, createdAt: clock.now() };
      await store.agents.putCredential(tokenHash(key), { kind: 'key', agentId, createdAt: info.createdAt, keyId: info.keyId, name });
      return Object.assign({ key }, info);
    },
    async keys(agentId) {
      return (await store.agents.credentials(agentId, 'key')).map(({ credential: c }) => ({
        keyId: c.keyId ?? '',
        name: c.name ?? '',
        createdAt: c.createdAt,
      }));
    },
    async revokeKey(agentId, keyId) {
      const found = (await store.agents.credentials(agentId, 'key')).find((k) => k.credential.keyId === keyId);
      return found ? store.agents.removeCredential(found.hash) : false;
    },
    async keyOwner(key) {
      const c = await store.agents.getCredential(tokenHash(key));
      return c?.kind === 'key' ? live(await store.agents.get(c.agentId)) : undefined;
    },
  };
}
