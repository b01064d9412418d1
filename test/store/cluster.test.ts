// Contract: NodeStore and OwnershipStore (src/store/repos.ts, the cluster block), on every engine of engines.ts.
// Leases are real time (the database's on PostgreSQL), so the tests that let one end use short leases and wait.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isOwnershipLost, OwnershipLostError } from '../../src/store/errors.ts';
import type { ConversationRecord } from '../../src/store/model.ts';
import type { NodeLease, Store } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines } from './engines.ts';

const load = { sdkConnections: 0, sdkFunctions: 0, conversations: 0 };
const lease = (nodeId: string, leaseMs = 10_000): NodeLease => ({ nodeId, instance: randomUUID(), leaseMs, load });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * A lease this short ends within the test, and is long enough for the few steps a test takes before it ends on a
 * loaded machine. Its end is waited for (`ended`), never guessed with a sleep.
 */
const SHORT_MS = 1000;
/** Waits (generously: the machine is busy) until the store lists `nodeId` as no longer alive. */
async function ended(store: Store, nodeId: string): Promise<void> {
  await expect.poll(async () => (await store.nodes.list()).find((n) => n.nodeId === nodeId)?.alive, { timeout: 15_000, interval: 50 }).toBe(false);
}

async function joined(store: Store, nodeId: string, leaseMs?: number): Promise<NodeLease> {
  const l = lease(nodeId, leaseMs);
  expect(await store.nodes.join(l)).toBe(true);
  return l;
}

const conversation = (id: string, fields: Partial<ConversationRecord> = {}): ConversationRecord =>
  Object.assign(
    { conversationId: id, customerId: `cus_${id}`, channel: 'web' as const, snapshot: { value: 'idle' }, state: 'idle', busy: false, updatedAt: 100 },
    fields,
  );

export function describeClusterContract(engine: string, open: () => Promise<Store>, sibling: (first: Store) => Promise<Store>) {
  describe(`${engine}: cluster nodes`, () => {
    const store = freshStore(open);

    it('says whether several processes share it: the features ask this capability, never the engine', () => {
      // PostgreSQL is shared by every node on it; LMDB is held by one process (src/README.md, "The composition root").
      expect(store().capabilities).toEqual({ clustered: engine === 'postgres' });
    });

    it('a joined node is listed alive with its lease and load; renew moves the lease and records the load', async () => {
      const a = await joined(store(), 'node-a', 5000);
      const [view] = await store().nodes.list();
      expect(view).toMatchObject({ nodeId: 'node-a', alive: true, load });
      expect(view.leaseAgeMs).toBeGreaterThanOrEqual(0);
      expect(view.leaseAgeMs).toBeLessThan(2000);
      expect(view.leaseLeftMs).toBeGreaterThan(3000);
      expect(view.leaseLeftMs).toBeLessThanOrEqual(5000);
      const busier = { sdkConnections: 2, sdkFunctions: 7, conversations: 3 };
      expect(await store().nodes.renew(Object.assign({}, a, { load: busier }))).toBe(true);
      expect((await store().nodes.list())[0].load).toEqual(busier);
    });

    it('only the instance that joined can renew; another live instance cannot take the id', async () => {
      const a = await joined(store(), 'node-a');
      expect(await store().nodes.renew(Object.assign({}, a, { instance: 'someone-else' }))).toBe(false);
      expect(await store().nodes.join(lease('node-a'))).toBe(false);
      expect(await store().nodes.renew(a)).toBe(true);
    });

    it('once the lease ends: renew fails (the node must stop) and the id can be joined again', async () => {
      const a = await joined(store(), 'node-a', SHORT_MS);
      await ended(store(), 'node-a');
      expect((await store().nodes.list())[0]).toMatchObject({ nodeId: 'node-a', alive: false, leaseLeftMs: 0 });
      expect(await store().nodes.renew(a)).toBe(false);
      const again = await joined(store(), 'node-a');
      expect(await store().nodes.renew(a)).toBe(false);
      expect(await store().nodes.renew(again)).toBe(true);
    });

    it('leave removes the node and frees its conversations at once; prune removes long-dead nodes', async () => {
      const a = await joined(store(), 'node-a');
      const b = await joined(store(), 'node-b');
      expect(await store().ownership.claim('c1', 'node-a')).toEqual({ claimed: true, epoch: 1 });
      await store().nodes.leave('node-a', 'not-its-instance');
      expect((await store().nodes.list()).map((n) => n.nodeId)).toEqual(['node-a', 'node-b']);
      await store().nodes.leave(a.nodeId, a.instance);
      expect((await store().nodes.list()).map((n) => n.nodeId)).toEqual(['node-b']);
      expect(await store().ownership.owner('c1')).toEqual({ nodeId: null, epoch: 1 });
      expect(await store().ownership.claim('c1', 'node-b')).toEqual({ claimed: true, epoch: 2 });

      await joined(store(), 'node-c', SHORT_MS);
      await ended(store(), 'node-c');
      expect(await store().nodes.prune(60_000)).toBe(0);
      expect(await store().nodes.prune(0)).toBe(1);
      expect((await store().nodes.list()).map((n) => n.nodeId)).toEqual([b.nodeId]);
    });
  });

  describe(`${engine}: conversation ownership`, () => {
    const store = freshStore(open);

    it('claim: unowned → epoch 1; the owner claiming again keeps its epoch; a live owner keeps it from others', async () => {
      await joined(store(), 'node-a');
      await joined(store(), 'node-b');
      expect(await store().ownership.owner('c1')).toBeUndefined();
      expect(await store().ownership.claim('c1', 'node-a')).toEqual({ claimed: true, epoch: 1 });
      expect(await store().ownership.claim('c1', 'node-a')).toEqual({ claimed: true, epoch: 1 });
      expect(await store().ownership.claim('c1', 'node-b')).toEqual({ claimed: false, reason: 'held', owner: { nodeId: 'node-a', epoch: 1 } });
      expect(await store().ownership.owner('c1')).toEqual({ nodeId: 'node-a', epoch: 1 });
      expect(await store().ownership.countByNode()).toEqual({ 'node-a': 1 });
    });

    it('a node without a live lease claims nothing', async () => {
      expect(await store().ownership.claim('c1', 'never-joined')).toEqual({ claimed: false, reason: 'not_alive' });
      await joined(store(), 'node-a', SHORT_MS);
      await ended(store(), 'node-a');
      expect(await store().ownership.claim('c1', 'node-a')).toMatchObject({ claimed: false, reason: 'not_alive' });
      expect(await store().ownership.owner('c1')).toBeUndefined();
    });

    it("when the owner's lease ends another node claims with the next epoch; released conversations too", async () => {
      await joined(store(), 'node-a', SHORT_MS);
      await joined(store(), 'node-b');
      expect(await store().ownership.claim('c1', 'node-a')).toEqual({ claimed: true, epoch: 1 });
      await ended(store(), 'node-a');
      expect(await store().ownership.countByNode()).toEqual({});
      expect(await store().ownership.claim('c1', 'node-b')).toEqual({ claimed: true, epoch: 2 });
      expect(await store().ownership.release('c1', 'node-b', 1)).toBe(false);
      expect(await store().ownership.release('c1', 'node-b', 2)).toBe(true);
      expect(await store().ownership.owner('c1')).toEqual({ nodeId: null, epoch: 2 });
      expect(await store().ownership.claim('c1', 'node-b')).toEqual({ claimed: true, epoch: 3 });
    });

    it('20 concurrent claims of one conversation by 20 live nodes (two processes on PostgreSQL): one wins, one epoch', async () => {
      const other = await sibling(store());
      try {
        await Promise.all([warmUp(store()), warmUp(other)]);
        const nodes = Array.from({ length: 20 }, (_, i) => `node-${String(i).padStart(2, '0')}`);
        for (const [i, id] of nodes.entries()) await joined(i % 2 ? other : store(), id);
        const outcomes = await concurrently(20, (i) => (i % 2 ? other : store()).ownership.claim('c1', nodes[i]));
        const winners = outcomes.flatMap((o, i) => (o.claimed ? [{ node: nodes[i], epoch: o.epoch }] : []));
        expect(winners).toHaveLength(1);
        expect(winners[0].epoch).toBe(1);
        for (const o of outcomes) if (!o.claimed) expect(o).toEqual({ claimed: false, reason: 'held', owner: { nodeId: winners[0].node, epoch: 1 } });
        expect(await store().ownership.owner('c1')).toEqual({ nodeId: winners[0].node, epoch: 1 });
      } finally {
        if (other !== store()) await other.close();
      }
    });

    it('a write fenced with a stale epoch is refused and leaves nothing; the new owner writes', async () => {
      await joined(store(), 'node-a', SHORT_MS);
      await joined(store(), 'node-b');
      const a = await store().ownership.claim('c1', 'node-a');
      expect(a).toEqual({ claimed: true, epoch: 1 });
      await ended(store(), 'node-a'); // node A paused past its lease
      expect(await store().ownership.claim('c1', 'node-b')).toEqual({ claimed: true, epoch: 2 });

      const stale = store().transaction(async (tx) => {
        await tx.ownership.assertOwner('c1', 'node-a', 1);
        await tx.conversations.put(conversation('c1', { state: 'written-by-a' }));
      });
      await expect(stale).rejects.toBeInstanceOf(OwnershipLostError);
      const err = await stale.catch((e: unknown) => e);
      expect(isOwnershipLost(err) && err.current).toEqual({ nodeId: 'node-b', epoch: 2 });
      expect(await store().conversations.get('c1')).toBeUndefined();

      await store().transaction(async (tx) => {
        await tx.ownership.assertOwner('c1', 'node-b', 2);
        await tx.conversations.put(conversation('c1', { state: 'written-by-b' }));
      });
      expect((await store().conversations.get('c1'))?.state).toBe('written-by-b');
    });

    it('joining an id again starts a new incarnation: what the id owned before is released', async () => {
      await joined(store(), 'node-a', SHORT_MS);
      expect(await store().ownership.claim('c1', 'node-a')).toEqual({ claimed: true, epoch: 1 });
      await ended(store(), 'node-a');
      await joined(store(), 'node-a');
      await expect(store().transaction((tx) => tx.ownership.assertOwner('c1', 'node-a', 1))).rejects.toBeInstanceOf(OwnershipLostError);
      expect(await store().ownership.claim('c1', 'node-a')).toEqual({ claimed: true, epoch: 2 });
    });

    it('waitingOn: what a node owns with work waiting (mid-turn, a follow-up, inbox entries), by id', async () => {
      await joined(store(), 'node-a');
      await joined(store(), 'node-b');
      for (const id of ['c1', 'c2', 'c3', 'c4', 'c5']) expect(await store().ownership.claim(id, 'node-a')).toMatchObject({ claimed: true });
      expect(await store().ownership.claim('c6', 'node-b')).toMatchObject({ claimed: true });
      await store().conversations.put(conversation('c1'));
      await store().conversations.put(conversation('c2', { busy: true }));
      await store().conversations.put(conversation('c3', { followupPending: { content: 'x', decidedAt: 1 } }));
      await store().inbox.post('c4', { type: 'release' }, 1);
      await store().conversations.put(conversation('c6', { busy: true }));
      expect(await store().ownership.waitingOn('node-a', 10)).toEqual(['c2', 'c3', 'c4']);
      expect(await store().ownership.waitingOn('node-a', 2)).toEqual(['c2', 'c3']);
      expect(await store().ownership.waitingOn('node-b', 10)).toEqual(['c6']);
      expect(await store().ownership.waitingOn('node-c', 10)).toEqual([]);
    });

    it('orphaned: conversations of nodes whose lease ended, those with work waiting first', async () => {
      await joined(store(), 'dead', SHORT_MS);
      await joined(store(), 'live');
      for (const id of ['c1', 'c2', 'c3', 'c4']) expect(await store().ownership.claim(id, 'dead')).toMatchObject({ claimed: true });
      expect(await store().ownership.claim('c5', 'live')).toMatchObject({ claimed: true });
      await store().conversations.put(conversation('c3', { busy: true }));
      await store().conversations.put(conversation('c2'));
      await store().conversations.put(conversation('c4', { followupPending: { content: 'x', decidedAt: 1 } }));
      expect(await store().ownership.orphaned(10)).toEqual([]);
      await ended(store(), 'dead');
      const orphaned = await store().ownership.orphaned(10);
      expect(orphaned).toEqual([
        { conversationId: 'c3', nodeId: 'dead', epoch: 1, waiting: true },
        { conversationId: 'c4', nodeId: 'dead', epoch: 1, waiting: true },
        { conversationId: 'c1', nodeId: 'dead', epoch: 1, waiting: false },
        { conversationId: 'c2', nodeId: 'dead', epoch: 1, waiting: false },
      ]);
      expect(await store().ownership.orphaned(1)).toEqual(orphaned.slice(0, 1));

      // Released by a clean stop: listed while work waits (mid-turn), not when idle.
      expect(await store().ownership.release('c5', 'live', 1)).toBe(true);
      await store().conversations.put(conversation('c5'));
      expect((await store().ownership.orphaned(10)).map((o) => o.conversationId)).toEqual(['c3', 'c4', 'c1', 'c2']);
      await store().conversations.put(conversation('c5', { busy: true }));
      expect((await store().ownership.orphaned(10))[2]).toEqual({ conversationId: 'c5', nodeId: null, epoch: 1, waiting: true });
    });
  });
}

for (const e of engines) describeClusterContract(e.name, e.open, e.sibling);

// PostgreSQL only: what several processes on one database add.
const postgres = engines.find((e) => e.name === 'postgres')!;
describe('postgres: cluster across processes', () => {
  const store = freshStore(postgres.open);

  it('a claim waits for an open write that holds the epoch; the write commits first, the claim gets the next epoch', async () => {
    const other = await postgres.sibling(store());
    try {
      await joined(store(), 'node-a', SHORT_MS);
      await joined(other, 'node-b');
      expect(await store().ownership.claim('c1', 'node-a')).toEqual({ claimed: true, epoch: 1 });
      let checked!: () => void;
      const ownerChecked = new Promise<void>((r) => (checked = r));
      let finish!: () => void;
      const gate = new Promise<void>((r) => (finish = r));
      const write = store().transaction(async (tx) => {
        await tx.ownership.assertOwner('c1', 'node-a', 1);
        checked();
        await gate;
        await tx.conversations.put(conversation('c1', { state: 'written-by-a' }));
      });
      await ownerChecked;
      await ended(store(), 'node-a'); // A's lease ends while its write is open
      let claimedAt = 0;
      const claim = other.ownership.claim('c1', 'node-b').then((o) => ((claimedAt = Date.now()), o));
      await sleep(300);
      expect(claimedAt).toBe(0);
      const committedAt = Date.now();
      finish();
      await write;
      expect(await claim).toEqual({ claimed: true, epoch: 2 });
      expect(claimedAt).toBeGreaterThanOrEqual(committedAt);
      expect((await other.conversations.get('c1'))?.state).toBe('written-by-a');
    } finally {
      await other.close();
    }
  });

  it("a node whose process is gone (its store's connections closed) is not alive, whatever its lease says", async () => {
    const other = await postgres.sibling(store());
    await joined(other, 'node-gone', 60_000);
    await joined(store(), 'node-b');
    expect(await store().ownership.claim('c1', 'node-gone')).toEqual({ claimed: true, epoch: 1 });
    await other.close();
    // The server lists a closed session until its backend exits: give it a moment.
    let outcome = await store().ownership.claim('c1', 'node-b');
    for (const end = Date.now() + 15_000; !outcome.claimed && Date.now() < end; outcome = await store().ownership.claim('c1', 'node-b')) await sleep(50);
    expect(outcome).toEqual({ claimed: true, epoch: 2 });
    const gone = (await store().nodes.list()).find((n) => n.nodeId === 'node-gone');
    expect(gone).toMatchObject({ alive: false });
    expect(gone!.leaseLeftMs).toBeGreaterThan(50_000);
  });
});
