// This process's membership of the cluster (issue 17): it joins with a lease on its row in the store's `nodes`
// (database time on PostgreSQL; in memory on LMDB, where the cluster is this one process), renews it with a heartbeat
// every fifth of the lease, and keeps the cluster's view for /ready and /diagnostics so they never wait for the
// database.
//
// A node that cannot renew its own lease (the lease ended, another instance took the id over, or the store did not
// answer for a whole lease) has lost it: other nodes may already be claiming its conversations. It tells its `onLost`
// listeners (they stop its actors: nothing it still holds may be written or sent), then joins again under a new id
// (`<id>.2`, `.3`, …) and tells its `onJoined` listeners. Whether a renewal is overdue is measured with the process's
// monotonic time from when the last successful renewal was sent (never later than the database set the lease), not
// with the injected clock, whose test-mode offset can jump.
import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { NodeLease, NodeLoad, NodeStore, NodeView, OwnershipStore } from '../store/repos.ts';

export type MembershipStatus = 'joining' | 'member' | 'rejoining' | 'stopped';

export interface ClusterNodeView extends NodeView {
  /** This process. Its load is the live one, not the last heartbeat's. */
  self: boolean;
  /** Conversations the node owns. */
  conversationsOwned: number;
}

export interface ClusterView {
  nodeId: string;
  status: MembershipStatus;
  leaseSeconds: number;
  /** Why the last lease was lost (kept after rejoining, for diagnostics). */
  lastLoss?: { nodeId: string; reason: string };
  nodes: ClusterNodeView[];
}

export interface LeaseLoss {
  /** The id under which the lease was lost (the node rejoins under another). */
  nodeId: string;
  reason: string;
}

export interface ClusterMembership {
  /** Joins; rejects when the store cannot be reached, or the id stays held by another live node for a whole lease. */
  start(): Promise<void>;
  /** Stops the heartbeat and leaves (its conversations become claimable at once). */
  stop(): Promise<void>;
  nodeId(): string;
  status(): MembershipStatus;
  /**
   * A member whose last renewal was sent less than a lease ago (the process's monotonic time): false in the moments
   * after a pause longer than the lease, before the watchdog has run. What is only shown live (typing, a reply being
   * written) is not shown without it.
   */
  holdsLease(): boolean;
  /** Another node was alive at the last heartbeat (cheap: asked for every frame a widget is sent). */
  peersAlive(): boolean;
  /** Reads the cluster's nodes now, not at the next heartbeat (another node says it joined). */
  refreshView(): Promise<void>;
  view(): ClusterView;
  /** This node lost its lease: stop every actor and send nothing more for what it owned. Awaited before rejoining. */
  onLost(listener: (loss: LeaseLoss) => void | Promise<void>): () => void;
  /** Joined again under a new id after a loss. */
  onJoined(listener: (nodeId: string) => void): () => void;
  /** Nodes alive at one heartbeat's look were not at the next (they died, or left). */
  onPeersGone(listener: (nodeIds: string[]) => void): () => void;
}

export interface MembershipOptions {
  nodes: NodeStore;
  ownership: Pick<OwnershipStore, 'countByNode'>;
  /** The heartbeat's and the watchdog's timers: real time (never the test-mode clock, whose offset jumps). */
  clock: Clock;
  logger: Logger;
  /** `cluster.node_id`; generated when unset. */
  nodeId?: string;
  leaseSeconds: number;
  /** What this node reports with each heartbeat. */
  load: () => NodeLoad;
  /** Monotonic ms (default `performance.now`). */
  monotonicNow?: () => number;
}

/** Heartbeats per lease. */
const BEATS_PER_LEASE = 5;
/** Rows of nodes whose lease ended this long ago are removed (every PRUNE_EVERY beats). */
const FORGET_DEAD_AFTER_MS = 10 * 60_000;
const PRUNE_EVERY = 60;

export const generatedNodeId = () =>
  `${
    hostname()
      .replace(/[^A-Za-z0-9_-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 32) || 'parley'
  }-${randomBytes(3).toString('hex')}`;

export function createClusterMembership(o: MembershipOptions): ClusterMembership {
  const mono = o.monotonicNow ?? (() => performance.now());
  const log = o.logger.child({ component: 'cluster' });
  const leaseMs = Math.round(o.leaseSeconds * 1000);
  const beatMs = Math.max(100, Math.floor(leaseMs / BEATS_PER_LEASE));
  const baseId = o.nodeId ?? generatedNodeId();

  let incarnation = 1;
  let lease: NodeLease = { nodeId: baseId, instance: randomUUID(), leaseMs, load: o.load() };
  let status: MembershipStatus = 'joining';
  /** Bumped at every loss: a renewal answered after it belongs to the lost lease. */
  let generation = 0;
  let lastRenewSentAt = 0;
  let lastLoss: LeaseLoss | undefined;
  let beats = 0;
  let beatTimer: TimerHandle | undefined;
  let watchdog: TimerHandle | undefined;
  let beating: Promise<void> | undefined;
  let snapshot: { nodes: NodeView[]; owned: Record<string, number>; at: number } = { nodes: [], owned: {}, at: mono() };
  const lostListeners = new Set<(loss: LeaseLoss) => void | Promise<void>>();
  const joinedListeners = new Set<(nodeId: string) => void>();
  const peersGoneListeners = new Set<(nodeIds: string[]) => void>();

  const overdue = () => mono() - lastRenewSentAt >= leaseMs;
  const fresh = (nodeId: string): NodeLease => ({ nodeId, instance: randomUUID(), leaseMs, load: o.load() });

  const refresh = async () => {
    try {
      const [nodes, owned] = await Promise.all([o.nodes.list(), o.ownership.countByNode()]);
      const alive = (list: NodeView[]) => new Set(list.filter((n) => n.alive && n.nodeId !== lease.nodeId).map((n) => n.nodeId));
      const stillAlive = alive(nodes);
      const gone = [...alive(snapshot.nodes)].filter((id) => !stillAlive.has(id));
      snapshot = { nodes, owned, at: mono() };
      if (gone.length) for (const listener of peersGoneListeners) listener(gone);
    } catch (err) {
      log.debug({ err: { message: (err as Error).message } }, 'could not read the cluster view');
    }
  };

  const armWatchdog = () => {
    o.clock.clearTimeout(watchdog);
    if (status !== 'member') return;
    watchdog = o.clock.setTimeout(
      () => {
        if (status !== 'member') return;
        if (overdue()) void lose('no renewal within the lease (the store did not answer in time)', 'warn');
        else armWatchdog();
      },
      Math.max(1, leaseMs - (mono() - lastRenewSentAt)),
    );
  };

  const joined = (sentAt: number) => {
    status = 'member';
    lastRenewSentAt = sentAt;
    armWatchdog();
  };

  /**
   * `error` when another instance took the id over or the lease ended unseen (something is wrong with this node or
   * its configuration); `warn` when the store stopped answering: that outage is already reported, and the node
   * recovers by itself once the store is back.
   */
  async function lose(reason: string, level: 'error' | 'warn') {
    if (status !== 'member') return;
    status = 'rejoining';
    generation++;
    o.clock.clearTimeout(watchdog);
    const lost = lease;
    lastLoss = { nodeId: lost.nodeId, reason };
    log[level]({ nodeId: lost.nodeId, reason }, 'this node lost its cluster lease: stopping its work, then joining again under a new id');
    for (const listener of lostListeners) {
      try {
        await listener(lastLoss);
      } catch (err) {
        log.error({ err }, 'a lease-loss listener failed');
      }
    }
    // Its work is stopped: free what it still owned at once (nothing, if another instance took the id over).
    await o.nodes.leave(lost.nodeId, lost.instance).catch(() => undefined);
  }

  async function rejoin() {
    const next = fresh(`${baseId}.${incarnation + 1}`);
    const sentAt = mono();
    try {
      if (!(await o.nodes.join(next))) {
        incarnation++; // held by a live node (an earlier process of the same id): try the next one
        return;
      }
    } catch (err) {
      log.warn({ err: { message: (err as Error).message } }, 'could not join the cluster again yet');
      return;
    }
    if (status !== 'rejoining') return;
    incarnation++;
    lease = next;
    joined(sentAt);
    log.warn({ nodeId: lease.nodeId }, 'joined the cluster again under a new id');
    for (const listener of joinedListeners) listener(lease.nodeId);
    await refresh();
  }

  async function beat() {
    if (status === 'member') {
      const gen = generation;
      const sentAt = mono();
      const current = Object.assign({}, lease, { load: o.load() });
      let renewed: boolean | undefined;
      try {
        renewed = await o.nodes.renew(current);
      } catch (err) {
        log.warn({ err: { message: (err as Error).message } }, 'could not renew the cluster lease');
        if (gen === generation && overdue()) await lose('the store did not answer for a whole lease', 'warn');
      }
      if (gen === generation && status === 'member') {
        if (renewed === true) {
          lastRenewSentAt = sentAt;
          armWatchdog();
          await refresh();
        } else if (renewed === false) {
          await lose('the lease had ended, or another instance took the id over', 'error');
        }
      }
    }
    if (status === 'rejoining') await rejoin();
    if (++beats % PRUNE_EVERY === 0) await o.nodes.prune(FORGET_DEAD_AFTER_MS).catch(() => undefined);
  }

  const schedule = () => {
    if (status === 'stopped') return;
    beatTimer = o.clock.setTimeout(() => {
      beating = beat().finally(() => {
        beating = undefined;
        schedule();
      });
    }, beatMs);
  };

  return {
    async start() {
      const startedAt = mono();
      for (;;) {
        lease = Object.assign({}, lease, { load: o.load() });
        const sentAt = mono();
        if (await o.nodes.join(lease)) {
          joined(sentAt);
          break;
        }
        if (mono() - startedAt > leaseMs + 1000) {
          throw new Error(`cluster.node_id "${lease.nodeId}" is held by another live node (are two processes configured with the same cluster.node_id?)`);
        }
        await new Promise<void>((resolve) => o.clock.setTimeout(resolve, Math.min(500, beatMs)));
      }
      log.info({ nodeId: lease.nodeId, leaseSeconds: o.leaseSeconds }, 'joined the cluster');
      await refresh();
      schedule();
    },
    async stop() {
      if (status === 'stopped') return;
      const was = status;
      status = 'stopped';
      o.clock.clearTimeout(beatTimer);
      o.clock.clearTimeout(watchdog);
      await beating;
      if (was === 'member') await o.nodes.leave(lease.nodeId, lease.instance).catch((err: unknown) => log.warn({ err }, 'could not leave the cluster'));
    },
    nodeId: () => lease.nodeId,
    status: () => status,
    holdsLease: () => status === 'member' && !overdue(),
    refreshView: () => refresh(),
    peersAlive: () => {
      const elapsed = mono() - snapshot.at;
      return snapshot.nodes.some((n) => n.nodeId !== lease.nodeId && n.alive && n.leaseLeftMs > elapsed);
    },
    view() {
      const elapsed = mono() - snapshot.at;
      const nodes = snapshot.nodes.map((n): ClusterNodeView => {
        const self = n.nodeId === lease.nodeId && status === 'member';
        const leaseLeftMs = Math.max(0, Math.round(n.leaseLeftMs - elapsed));
        return {
          nodeId: n.nodeId,
          self,
          alive: n.alive && leaseLeftMs > 0,
          leaseAgeMs: Math.round(n.leaseAgeMs + elapsed),
          leaseLeftMs,
          joinedAt: n.joinedAt,
          load: self ? o.load() : n.load,
          conversationsOwned: snapshot.owned[n.nodeId] ?? 0,
        };
      });
      const view: ClusterView = { nodeId: lease.nodeId, status, leaseSeconds: o.leaseSeconds, nodes };
      if (lastLoss) view.lastLoss = lastLoss;
      return view;
    },
    onLost(listener) {
      lostListeners.add(listener);
      return () => lostListeners.delete(listener);
    },
    onJoined(listener) {
      joinedListeners.add(listener);
      return () => joinedListeners.delete(listener);
    },
    onPeersGone(listener) {
      peersGoneListeners.add(listener);
      return () => peersGoneListeners.delete(listener);
    },
  };
}
