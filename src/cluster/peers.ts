// Whether another node may be given work (an SDK call, a send), from this node's membership view. The view is
// refreshed at every heartbeat (a fifth of a lease), so a node that joined since may not be in it yet: such a node
// counts as alive while it was heard on the bus within a lease. A node in the view is alive when the view says so
// (on PostgreSQL that is also false as soon as its connections to the database are gone: a SIGKILLed node).
import type { ClusterView } from './membership.ts';

export function peerAlive(view: ClusterView, nodeId: string, heardAgoMs: number | undefined): boolean {
  const node = view.nodes.find((n) => n.nodeId === nodeId);
  if (node) return node.alive && !node.self;
  return nodeId !== view.nodeId && heardAgoMs !== undefined && heardAgoMs < view.leaseSeconds * 1000;
}
