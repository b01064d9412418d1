// Contract: AgentStore (src/store/repos.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import type { AgentAccount, AgentCredential } from '../../src/store/model.ts';
import type { Store } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines } from './engines.ts';

const ada: AgentAccount = { agentId: 'ag_ada', name: 'Ada', email: 'Ada@Example.com', role: 'admin', disabled: false, createdAt: 100 };
const bob: AgentAccount = { agentId: 'ag_bob', name: 'Bob', email: 'bob@example.com', role: 'agent', disabled: false, createdAt: 200 };
const session = (agentId: string, createdAt: number, expiresAt?: number): AgentCredential =>
  expiresAt === undefined ? { kind: 'session', agentId, createdAt } : { kind: 'session', agentId, createdAt, expiresAt };

export function describeAgentsContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: agents`, () => {
    const store = freshStore(open);

    it('an account is stored once per email, case-insensitively, and read back by id and by email in any case', async () => {
      expect(await store().agents.insert(ada)).toBe(true);
      expect(await store().agents.insert(Object.assign({}, bob, { email: 'ADA@example.COM' }))).toBe(false);
      expect(await store().agents.insert(bob)).toBe(true);
      expect(await store().agents.get('ag_ada')).toEqual(ada);
      expect(await store().agents.get('ag_bob')).toEqual(bob);
      expect(await store().agents.byEmail('ada@example.com')).toEqual(ada);
      expect(await store().agents.byEmail('nobody@example.com')).toBeUndefined();
      expect((await store().agents.list()).map((a) => a.agentId)).toEqual(['ag_ada', 'ag_bob']);
    });

    it('of 10 concurrent inserts of one email, exactly one succeeds', async () => {
      await warmUp(store());
      const results = await concurrently(10, (i) =>
        store().agents.insert(Object.assign({}, bob, { agentId: `ag_${i}`, email: i % 2 ? 'same@example.com' : 'SAME@example.com' })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store().agents.list()).toHaveLength(1);
    });

    it('update replaces name, role, disabled and password hash, never the email', async () => {
      await store().agents.insert(ada);
      await store().agents.update(Object.assign({}, ada, { name: 'Ada L.', role: 'agent', disabled: true, passwordHash: 'h', email: 'other@example.com' }));
      expect(await store().agents.get('ag_ada')).toEqual(Object.assign({}, ada, { name: 'Ada L.', role: 'agent', disabled: true, passwordHash: 'h' }));
      expect(await store().agents.byEmail('other@example.com')).toBeUndefined();
    });

    it('credentials: by hash, per agent and kind in order, removed one by one or all of a kind', async () => {
      await store().agents.putCredential('s1', session('ag_ada', 1));
      await store().agents.putCredential('s2', session('ag_ada', 2));
      await store().agents.putCredential('k1', { kind: 'key', agentId: 'ag_ada', createdAt: 3, keyId: 'key_1', name: 'script' });
      await store().agents.putCredential('s3', session('ag_bob', 4));
      expect(await store().agents.getCredential('k1')).toEqual({ kind: 'key', agentId: 'ag_ada', createdAt: 3, keyId: 'key_1', name: 'script' });
      expect((await store().agents.credentials('ag_ada', 'session')).map((c) => c.hash)).toEqual(['s1', 's2']);
      expect(await store().agents.removeCredential('s1')).toBe(true);
      expect(await store().agents.removeCredential('s1')).toBe(false);
      expect(await store().agents.removeCredentials('ag_ada', 'session')).toBe(1);
      expect(await store().agents.getCredential('s2')).toBeUndefined();
      expect(await store().agents.getCredential('k1')).toBeDefined();
      expect(await store().agents.getCredential('s3')).toBeDefined();
    });

    it('pruneCredentials removes those expired at or before now, never the ones without an end', async () => {
      await store().agents.putCredential('old', session('ag_ada', 1, 100));
      await store().agents.putCredential('edge', session('ag_ada', 1, 300));
      await store().agents.putCredential('live', session('ag_ada', 1, 301));
      await store().agents.putCredential('key', { kind: 'key', agentId: 'ag_ada', createdAt: 1, keyId: 'k' });
      expect(await store().agents.pruneCredentials(300)).toBe(2);
      expect(await store().agents.pruneCredentials(300)).toBe(0);
      expect((await store().agents.credentials('ag_ada', 'session')).map((c) => c.hash)).toEqual(['live']);
      expect(await store().agents.getCredential('key')).toBeDefined();
    });

    it('single use under concurrency: of 20 callers that lock, check and mark a link, exactly one succeeds', async () => {
      await store().agents.putCredential('link', { kind: 'setPassword', agentId: 'ag_ada', createdAt: 1, expiresAt: 10_000 });
      await warmUp(store());
      const results = await concurrently(20, (i) =>
        store().transaction(async (tx) => {
          const c = await tx.agents.lockCredential('link');
          if (!c || c.usedAt !== undefined) return false;
          await tx.agents.putCredential('link', Object.assign({}, c, { usedAt: 2000 + i }));
          return true;
        }),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });
}

for (const e of engines) describeAgentsContract(e.name, e.open);
