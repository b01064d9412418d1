// Cluster (issue 17): nodes, conversation ownership, the inbox of events for another node's conversations, and the bus.
// Part of the store's interface (../repos.ts).
//
// Several Parley processes (nodes) may share one PostgreSQL database. Each node holds a lease on its row in `nodes`,
// renewed by heartbeats and measured in the database's time (`now()`), so the nodes' own clocks never decide who is
// alive. A conversation has at most one owner, recorded with an epoch (a fencing token) that every claim bumps; a
// write for a conversation checks, inside its own transaction, that the epoch it holds is still the current one.
// On LMDB one process holds the store: the cluster is that one node, kept in memory.
import type { Channel } from '../model.ts';

/** What a node reports of itself with each heartbeat (shown by /ready and /diagnostics for every node). */
export interface NodeLoad {
  sdkConnections: number;
  /** Functions in this node's SDK catalog. */
  sdkFunctions: number;
  /** Conversation actors active on this node. */
  conversations: number;
}

/** One node's registration: `instance` is random per join, so that only the process that joined can renew it. */
export interface NodeLease {
  nodeId: string;
  instance: string;
  leaseMs: number;
  load: NodeLoad;
}

export interface NodeView {
  nodeId: string;
  /** How long ago the lease was last renewed, in the database's time (ms). */
  leaseAgeMs: number;
  /** How long until the lease ends (ms; 0 once it has ended). */
  leaseLeftMs: number;
  /** The lease holds (on PostgreSQL also: the node's connections are still there). */
  alive: boolean;
  /** When the node joined (ms since the epoch, the database's time). */
  joinedAt: number;
  load: NodeLoad;
}

export interface NodeStore {
  /**
   * Registers the node with a lease of `leaseMs` from now. Resolves false when the id is held by another live
   * instance (a second process configured with the same `cluster.node_id`); a row whose lease ended is taken over.
   */
  join(lease: NodeLease): Promise<boolean>;
  /**
   * Extends the lease by `leaseMs` from now and records the load. Resolves false when the lease has ended or the row
   * is no longer this instance's (taken over, or removed): the node must stop its work and join again under a new id.
   */
  renew(lease: NodeLease): Promise<boolean>;
  /** Every registered node, alive or not, by id. */
  list(): Promise<NodeView[]>;
  /** Removes the node's row (a clean stop): its conversations can be claimed at once. */
  leave(nodeId: string, instance: string): Promise<void>;
  /** Removes rows of nodes whose lease ended more than `olderThanMs` ago; resolves with how many. */
  prune(olderThanMs: number): Promise<number>;
}

export interface ConversationOwner {
  /** null: released (unowned), the epoch kept so that the next claim still moves it forward. */
  nodeId: string | null;
  epoch: number;
}

export type ClaimOutcome =
  | { claimed: true; epoch: number }
  /** `held`: another live node owns it (`owner`); `not_alive`: the claiming node has no live lease itself. */
  | { claimed: false; reason: 'held' | 'not_alive'; owner?: ConversationOwner };

export interface OrphanedConversation {
  conversationId: string;
  /** The owner whose lease ended; null: released (a clean stop) while work was waiting. */
  nodeId: string | null;
  epoch: number;
  /** The conversation has work waiting (mid-turn, or a follow-up pending): take these first. */
  waiting: boolean;
}

/**
 * Who may write a conversation. `claim` gives the conversation to `nodeId` with a new epoch when it is unowned or
 * its owner's lease has ended; claiming a conversation the node already owns returns its current epoch unchanged.
 * Concurrent claims (from any number of processes) give exactly one node one epoch.
 */
export interface OwnershipStore {
  claim(conversationId: string, nodeId: string): Promise<ClaimOutcome>;
  owner(conversationId: string): Promise<ConversationOwner | undefined>;
  /**
   * In a transaction, before its writes for the conversation: throws `OwnershipLostError` (src/store/errors.ts)
   * unless `nodeId` owns it at `epoch`. On PostgreSQL the row stays share-locked until the transaction ends, so a
   * claim waits for this write to commit and a write after a claim always sees the new epoch.
   */
  assertOwner(conversationId: string, nodeId: string, epoch: number): Promise<void>;
  /**
   * Conversations whose owner's lease has ended, and released ones with work waiting (mid-turn, or a follow-up
   * pending: a node stopped cleanly in the middle of a turn), those with work waiting first, then by id.
   */
  orphaned(limit: number): Promise<OrphanedConversation[]>;
  /**
   * Conversations `nodeId` owns that have work waiting (mid-turn, a follow-up pending, or inbox entries), by id: what
   * the node must be running. One it is not running (its activation failed after the claim, a notice was missed) is
   * picked up from this list.
   */
  waitingOn(nodeId: string, limit: number): Promise<string[]>;
  /** Gives the conversation up (resolves false when `nodeId` no longer owns it at `epoch`). */
  release(conversationId: string, nodeId: string, epoch: number): Promise<boolean>;
  /** Conversations owned per live node. */
  countByNode(): Promise<Record<string, number>>;
}

/** A conversation's event that reached a node which does not own the conversation, kept for its owner. */
export type InboxEvent =
  | {
      type: 'customer';
      customerId: string;
      externalId?: string;
      channel: Channel;
      message: { messageId: string; text: string; content?: object };
    }
  | { type: 'confirm'; confirmationId: string; approve: boolean }
  /** `agentId`: the signed-in agent who asked for it. */
  | { type: 'handoff'; reason?: string; agentId?: string }
  | { type: 'release'; agentId?: string }
  /** An agent resolved it (the inbox): a release that says so when a person has it, else recorded as it is. */
  | { type: 'resolve'; by: { agentId: string; name: string } }
  | { type: 'agent'; message: { id: string; text: string; author: { name: string; agentId?: string } } };

export interface InboxEntry {
  id: number;
  conversationId: string;
  event: InboxEvent;
  /** When it was posted (ms). */
  at: number;
}

/**
 * The durable inbox of conversations owned by another node: a node posts an event (and acknowledges it once the post
 * has committed); the owner takes the conversation's entries in order and removes them in the same transaction as
 * the write that stores what they carried, so an entry is applied exactly once whoever owns the conversation next.
 */
export interface InboxStore {
  /** Stores the event; resolves with its entry (ids grow with every post). */
  post(conversationId: string, event: InboxEvent, at: number): Promise<InboxEntry>;
  /** The conversation's entries, oldest first. */
  list(conversationId: string): Promise<InboxEntry[]>;
  /** In the owner's write transaction: removes the entries it applied. */
  remove(ids: number[]): Promise<void>;
  /** Conversations with entries waiting whose owner is not a live node (or that nobody owns), oldest entry first. */
  unattended(limit: number): Promise<string[]>;
  /**
   * Conversations `nodeId` owns with an entry posted before `before` (ms) still waiting, oldest entry first: their
   * owner's wake-up was lost on the way (a notice dropped while its LISTEN connection stayed up).
   */
  overdue(nodeId: string, before: number, limit: number): Promise<string[]>;
}

/** The most a bus payload carries in one notice; a longer one is stored and its id sent (the engine does it). */
export const BUS_NOTICE_BYTES = 7000;

/**
 * Messages between the nodes that share the store (PostgreSQL: NOTIFY on one channel; LMDB: this process). Delivered
 * to every node listening when it is sent, this one included, at most once and never stored for later: a node that
 * was not listening (its connection was lost) misses it, and hears `resync` once it listens again. Durable work goes
 * through the inbox or the jobs, never through the bus alone.
 */
export interface ClusterBus {
  /** Resolves once sent (PostgreSQL: committed). */
  publish(topic: string, payload: string): Promise<void>;
  /** Returns the unsubscribe. */
  subscribe(topic: string, listener: (payload: string) => void): () => void;
  /** Called after the node (re)starts listening: whatever was published while it did not is lost. */
  onResync(listener: () => void): () => void;
  /** True while this node hears the bus. */
  listening(): boolean;
  close(): Promise<void>;
}
