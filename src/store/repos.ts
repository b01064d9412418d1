// The store as features see it: one repository per kind of record, each a handful of named operations with
// domain types in and out (model.ts). Two engines serve it, LMDB (embedded, one process) and PostgreSQL
// (src/store/lmdb/, src/store/postgres/); no feature imports an engine, and both pass the same contract suite
// (test/store/).
//
// Every operation is asynchronous. Writes resolve once durable. `transaction` runs an async callback inside
// one database transaction: every repository of the `tx` it is given joins it, reads through `tx` see the
// transaction's own writes, and nothing is written if the callback throws. Inside a transaction call only `tx`'s
// operations (never a network call or a timer): on LMDB the write lock is held until the callback settles.
//
// Checks that must not race take a lock first and then read (PostgreSQL at READ COMMITTED: `lock…` operations
// are `SELECT … FOR UPDATE` or a transaction-scoped advisory lock, so each read after them sees every earlier
// committed write; LMDB runs one write transaction at a time, so its locks cost nothing).
//
// This file is the index: features and engines import every repository from here. Each domain's interfaces are in
// repos/ (customers, history, agents, proactive, jobs, whatsapp, telemetry, cluster); the conversation store stays here
// with `StoreRepos` and `Store`, because its `persist` hands the transaction's repositories to the caller.
import type { KnowledgeStore } from './knowledge.ts';
import type { ConversationMeta, ConversationRecord, ConversationSummary, MessageRecord } from './model.ts';
import type { OutcomeStore } from './outcomes.ts';
import type { AgentInboxStore, AgentStore } from './repos/agents.ts';
import type { ClusterBus, InboxStore, NodeStore, OwnershipStore } from './repos/cluster.ts';
import type { CustomerStore, MagicLinkStore } from './repos/customers.ts';
import type { HistoryStore } from './repos/history.ts';
import type { JobNotice, JobStore } from './repos/jobs.ts';
import type { ProactiveStore } from './repos/proactive.ts';
import type { TelemetryStore } from './repos/telemetry.ts';
import type { WhatsAppStore } from './repos/whatsapp.ts';

export * from './repos/agents.ts';
export * from './repos/cluster.ts';
export * from './repos/customers.ts';
export * from './repos/history.ts';
export * from './repos/jobs.ts';
export * from './repos/proactive.ts';
export * from './repos/telemetry.ts';
export * from './repos/whatsapp.ts';

export interface ConversationStore {
  get(conversationId: string): Promise<ConversationRecord | undefined>;
  /** In a transaction: holds every other transaction that locks this conversation until this one ends (even before it exists). */
  lock(conversationId: string): Promise<ConversationRecord | undefined>;
  /** `lock` for a writer that replaces the snapshot: the record without it (PostgreSQL does not send it). */
  lockFields(conversationId: string): Promise<Omit<ConversationRecord, 'snapshot'> | undefined>;
  put(record: ConversationRecord): Promise<void>;
  /**
   * `put`, and the conversation's new history records appended in order (as `history.append` would), in one
   * statement on PostgreSQL: a turn's writes cost one round trip each, not one per record. Call it after `lock`.
   * Resolves the record's version: every write of the record (`put`, `save`) moves it on.
   */
  save(record: ConversationRecord, messages: MessageRecord[]): Promise<number>;
  /**
   * `save` on its own (not in a transaction: one statement on PostgreSQL, where a transaction costs five), for the
   * writer that holds the conversation: under the conversation's lock it checks that the record is still at `version`
   * (nobody wrote it since this writer's last `save`), that `owner`, when given, still owns it (as
   * `ownership.assertOwner`), and that no customer message (`role: 'user'`) of `messages` is stored already. Resolves
   * the new version; undefined, with nothing written, when a check fails: write in a transaction then.
   */
  saveIfUnchanged(
    record: ConversationRecord,
    messages: MessageRecord[],
    expected: { version: number; owner?: { nodeId: string; epoch: number } },
  ): Promise<number | undefined>;
  /**
   * The write of the conversation's writer (the host, which holds it): `record` and its new history records, in one
   * atomic write, each engine its fastest safe way (LMDB: one transaction; PostgreSQL: one statement when `version` is
   * the stored one and there are no `channelWrites`, else a transaction). Outside a transaction. Under the
   * conversation's lock:
   * - `owner`, when given, must own the conversation at that epoch, else it throws `OwnershipLostError` (fenced);
   * - a customer message (`role: 'user'`) of `messages` already stored writes nothing: resolves `{ seen }` with their
   *   ids (the store is the authority on which messages it has; write again without them);
   * - a record another writer moved on since `version` (none: the writer has not written it yet) keeps the fields
   *   others write (model.ts `keepOthersFields`): `othersWrote` says so;
   * - `channelWrites` run in the same transaction after the record is written (an outbound job, inbox removals):
   *   throwing aborts the whole write.
   * Resolves the record's new version and the record as written.
   */
  persist(
    record: ConversationRecord,
    messages: MessageRecord[],
    expected: { version?: number; owner?: { nodeId: string; epoch: number } },
    channelWrites?: (tx: StoreRepos) => Promise<void>,
  ): Promise<PersistOutcome>;
  /** Conversations that were mid-turn (`busy`): resumed at start. */
  busy(): Promise<ConversationMeta[]>;
  /**
   * Conversations whose last message is at or before `cutoff` and has no verdict yet (`reviewedAt` unset or before
   * `lastMessageAt`), oldest first: the reflection daemon's work list.
   */
  dueForReview(cutoff: number, limit: number): Promise<{ conversationId: string; lastMessageAt: number }[]>;
  /** Conversations with a follow-up decided and not yet settled (`followupPending`). */
  withPendingFollowup(limit: number): Promise<string[]>;
  /** Records without their snapshots, for lists: the given ids, or (without ids) the most recently active. */
  summaries(o: { ids?: string[]; limit: number }): Promise<ConversationSummary[]>;
  /**
   * Conversations a person has (`handoff` set), most recently handed over first (ties: higher id first); `before`: the
   * last one of the previous page (lists those after it).
   */
  withHuman(o: { before?: HandoffCursor; limit: number }): Promise<ConversationSummary[]>;
}

/**
 * What `conversations.persist` did: wrote `record` (the one given, or with the fields others write kept when
 * `othersWrote`) at `version`; or nothing, because these customer messages are stored already.
 */
export type PersistOutcome = { version: number; othersWrote: boolean; record: ConversationRecord } | { seen: string[] };

export interface HandoffCursor {
  since: number;
  conversationId: string;
}

/** The repositories a transaction's callback gets. */
export interface StoreRepos {
  customers: CustomerStore;
  conversations: ConversationStore;
  history: HistoryStore;
  links: MagicLinkStore;
  agents: AgentStore;
  agentInbox: AgentInboxStore;
  proactive: ProactiveStore;
  jobs: JobStore;
  whatsapp: WhatsAppStore;
  /** Conversation outcomes (outcomes.ts, issue 39). */
  outcomes: OutcomeStore;
  /** Cluster block below. */
  ownership: OwnershipStore;
  inbox: InboxStore;
}

export interface StoreChecks {
  /** `ok`, or what is failing, e.g. `write_failing: ENOSPC`, `unreachable: ECONNREFUSED`. */
  database: string;
  /** `ok`, or e.g. `pending (at 3, latest 5)`. */
  migrations: string;
}

/** What an engine can do beyond the repositories: the features ask this, never which engine it is. */
export interface StoreCapabilities {
  /**
   * Several processes share this store (PostgreSQL): conversations are claimed and fenced, inboxes and widget frames
   * are relayed between nodes, a dead node's conversations are taken over. False when one process holds the store
   * (LMDB): it owns every conversation, nothing is claimed, relayed or taken over.
   */
  readonly clustered: boolean;
}

export interface Store extends StoreRepos {
  readonly engine: 'lmdb' | 'postgres';
  readonly capabilities: StoreCapabilities;
  /** Where the data is, for logs and diagnostics (a URL's password masked). */
  readonly location: string;
  readonly telemetry: TelemetryStore;
  /** The knowledge base (knowledge.ts, issue 36). */
  readonly knowledge: KnowledgeStore;
  /** Cluster block below. */
  readonly nodes: NodeStore;
  readonly bus: ClusterBus;
  transaction<T>(fn: (tx: StoreRepos) => Promise<T>): Promise<T>;
  checks(): StoreChecks;
  /**
   * Hears of jobs stored by other processes on the same database, so their workers wake without polling (LMDB: one
   * process holds the store, and its queues wake themselves; nothing is ever announced). Returns the unsubscribe.
   */
  watchJobs(listener: (notice: JobNotice) => void): () => void;
  /**
   * Tells every job watcher to look at the store again: a peer node died, and what it committed but had not yet
   * announced is found now (PostgreSQL announces after commit). LMDB: nothing to do.
   */
  rescanJobs(): void;
  /**
   * Whether another process may be waiting for job notices (a cluster: another node alive). While it says no,
   * PostgreSQL sends none: this process's workers hear of its own jobs without the database. Default: always.
   */
  setJobNoticeAudience(othersListening: () => boolean): void;
  /** Called when writes work again after failing (the disk has room again, the database is back). */
  onRecovered(listener: () => void): () => void;
  /** Resolves when every write so far is durable. */
  flushed(): Promise<void>;
  /** True when the store holds no data yet (migrations and bookkeeping aside): a target `migrate-store` may fill. */
  isEmpty(): Promise<boolean>;
  close(): Promise<void>;
}
