// The cluster as /ready and /diagnostics show it: every node with its lease's age, and what it reported of its SDK
// connections and conversations (this node: live figures; others: their last heartbeat).
import type { ClusterView } from './membership.ts';

export interface ClusterNodeReport {
  nodeId: string;
  self: boolean;
  alive: boolean;
  leaseAgeMs: number;
  leaseLeftMs: number;
  joinedAt: number;
  sdk: { connections: number; functions: number };
  conversations: { active: number; owned: number };
}

export interface ClusterReport {
  nodeId: string;
  status: ClusterView['status'];
  leaseSeconds: number;
  nodes: ClusterNodeReport[];
}

export function clusterReport(view: ClusterView): ClusterReport {
  return {
    nodeId: view.nodeId,
    status: view.status,
    leaseSeconds: view.leaseSeconds,
    nodes: view.nodes.map((n) => ({
      nodeId: n.nodeId,
      self: n.self,
      alive: n.alive,
      leaseAgeMs: n.leaseAgeMs,
      leaseLeftMs: n.leaseLeftMs,
      joinedAt: n.joinedAt,
      sdk: { connections: n.load.sdkConnections, functions: n.load.sdkFunctions },
      conversations: { active: n.load.conversations, owned: n.conversationsOwned },
    })),
  };
}

/** `ok`, or why this node takes no traffic now (for /ready's error message). */
export function clusterCheck(view: ClusterView): string {
  if (view.status === 'member') return 'ok';
  if (view.status === 'rejoining') return `rejoining: lost the lease of ${view.lastLoss?.nodeId ?? view.nodeId} (${view.lastLoss?.reason ?? 'unknown'})`;
  return view.status;
}
