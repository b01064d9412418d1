// The cluster on LMDB: one process holds the store (the data directory is locked), so the cluster is that one process,
// kept in memory. Leases and epochs follow the same contract as on PostgreSQL (test/store/cluster.test.ts), timed by
// the process's real clock (not the test-mode offset, which would end every lease at once); nothing survives a
// restart, and nothing needs to: no earlier process can still be writing.
import { OwnershipLostError } from '../errors.ts';
import type { ConversationRecord } from '../model.ts';
import type { ClaimOutcome, NodeLoad, NodeStore, OrphanedConversation, OwnershipStore } from '../repos.ts';

interface NodeRow {
  instance: string;
  joinedAt: number;
  renewedAt: number;
  leaseUntil: number;
  load: NodeLoad;
}

export interface MemoryCluster {
  nodes: NodeStore;
  ownership: OwnershipStore;
  /** A live node owns the conversation. */
  attended(conversationId: string): boolean;
  /** The node that owns the conversation (null: released; undefined: never claimed). */
  ownerOf(conversationId: string): string | null | undefined;
}

/** `conversation`: a stored conversation, for `orphaned`'s "work waiting first". */
export function createMemoryCluster(o: {
  now: () => number;
  conversation: (id: string) => Promise<ConversationRecord | undefined>;
  /** The conversation has inbox entries. */
  inboxed: (id: string) => Promise<boolean>;
}): MemoryCluster {
  const nodes = new Map<string, NodeRow>();
  const owners = new Map<string, { nodeId: string | null; epoch: number }>();
  const alive = (nodeId: string | null) => {
    const row = nodeId === null ? undefined : nodes.get(nodeId);
    return row !== undefined && row.leaseUntil > o.now();
  };
  const releaseAll = (nodeId: string) => {
    for (const owner of owners.values()) if (owner.nodeId === nodeId) owner.nodeId = null;
  };

  const nodeStore: NodeStore = {
    join: async (l) => {
      const row = nodes.get(l.nodeId);
      if (row && row.instance !== l.instance && alive(l.nodeId)) return false;
      const now = o.now();
      nodes.set(l.nodeId, { instance: l.instance, joinedAt: now, renewedAt: now, leaseUntil: now + l.leaseMs, load: l.load });
      releaseAll(l.nodeId);
      return true;
    },
    renew: async (l) => {
      const row = nodes.get(l.nodeId);
      const now = o.now();
      if (!row || row.instance !== l.instance || row.leaseUntil <= now) return false;
      row.renewedAt = now;
      row.leaseUntil = now + l.leaseMs;
      row.load = l.load;
      return true;
    },
    list: async () => {
      const now = o.now();
      return [...nodes]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([nodeId, r]) => ({
          nodeId,
          leaseAgeMs: now - r.renewedAt,
          leaseLeftMs: Math.max(0, r.leaseUntil - now),
          alive: r.leaseUntil > now,
          joinedAt: r.joinedAt,
          load: r.load,
        }));
    },
    leave: async (nodeId, instance) => {
      if (nodes.get(nodeId)?.instance !== instance) return;
      nodes.delete(nodeId);
      releaseAll(nodeId);
    },
    prune: async (olderThanMs) => {
      let n = 0;
      for (const [id, r] of nodes) {
        if (r.leaseUntil < o.now() - olderThanMs) {
          nodes.delete(id);
          n++;
        }
      }
      return n;
    },
  };

  const ownership: OwnershipStore = {
    claim: async (conversationId, nodeId): Promise<ClaimOutcome> => {
      const current = owners.get(conversationId);
      if (!alive(nodeId)) return { claimed: false, reason: 'not_alive', owner: current && { nodeId: current.nodeId, epoch: current.epoch } };
      if (current && current.nodeId === nodeId) return { claimed: true, epoch: current.epoch };
      if (current && current.nodeId !== null && alive(current.nodeId))
        return { claimed: false, reason: 'held', owner: { nodeId: current.nodeId, epoch: current.epoch } };
      const epoch = (current?.epoch ?? 0) + 1;
      owners.set(conversationId, { nodeId, epoch });
      return { claimed: true, epoch };
    },
    owner: async (conversationId) => {
      const current = owners.get(conversationId);
      return current && { nodeId: current.nodeId, epoch: current.epoch };
    },
    assertOwner: async (conversationId, nodeId, epoch) => {
      const current = owners.get(conversationId);
      if (current?.nodeId === nodeId && current.epoch === epoch) return;
      throw new OwnershipLostError(conversationId, nodeId, epoch, current && { nodeId: current.nodeId, epoch: current.epoch });
    },
    orphaned: async (limit) => {
      const list: OrphanedConversation[] = [];
      for (const [conversationId, owner] of owners) {
        if (owner.nodeId !== null && alive(owner.nodeId)) continue;
        const record = await o.conversation(conversationId);
        const waiting = Boolean(record?.busy || record?.followupPending);
        if (owner.nodeId === null && !waiting) continue;
        list.push({ conversationId, nodeId: owner.nodeId, epoch: owner.epoch, waiting });
      }
      list.sort((a, b) => Number(b.waiting) - Number(a.waiting) || (a.conversationId < b.conversationId ? -1 : a.conversationId > b.conversationId ? 1 : 0));
      return list.slice(0, Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : undefined);
    },
    waitingOn: async (nodeId, limit) => {
      const ids: string[] = [];
      for (const [conversationId, owner] of owners) {
        if (owner.nodeId !== nodeId) continue;
        const record = await o.conversation(conversationId);
        if (record?.busy || record?.followupPending || (await o.inboxed(conversationId))) ids.push(conversationId);
      }
      return ids.sort().slice(0, Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : undefined);
    },
    release: async (conversationId, nodeId, epoch) => {
      const current = owners.get(conversationId);
      if (current?.nodeId !== nodeId || current.epoch !== epoch) return false;
      current.nodeId = null;
      return true;
    },
    countByNode: async () => {
      const counts: Record<string, number> = {};
      for (const owner of owners.values()) if (owner.nodeId !== null && alive(owner.nodeId)) counts[owner.nodeId] = (counts[owner.nodeId] ?? 0) + 1;
      return counts;
    },
  };

  return {
    nodes: nodeStore,
    ownership,
    attended: (conversationId) => alive(owners.get(conversationId)?.nodeId ?? null),
    ownerOf: (conversationId) => owners.get(conversationId)?.nodeId,
  };
}
