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
import type { KnowledgeStore } from './knowledge.ts';
import type { OutcomeStore } from './outcomes.ts';
import type {
  Channel,
  ConversationMeta,
  ConversationRecord,
  ConversationSummary,
  Customer,
  DeadJob,
  DeliveryRecord,
  EarlyStatus,
  IdentityKind,
  Job,
  AgentAccount,
  AgentCredential,
  AgentCredentialKind,
  InboxAgent,
  InboxNote,
  InboxThread,
  MagicLink,
  MessageRecord,
  SavedReply,
  MessageRole,
} from './model.ts';
import type { TelemetryEvent, TurnCallRecord } from './telemetry-records.ts';

export interface CustomerStore {
  get(customerId: string): Promise<Customer | undefined>;
  findBy(kind: IdentityKind, value: string): Promise<Customer | undefined>;
  /** In a transaction: the customer, locked until the transaction ends. */
  lock(customerId: string): Promise<Customer | undefined>;
  /** In a transaction: holds every other transaction that locks the same identity (existing or not) until this one ends. */
  lockIdentity(kind: IdentityKind, value: string): Promise<void>;
  /**
   * Writes the customer and points its identities (externalId, email, phone) at it. Identities `previous` had and
   * `customer` no longer has are released. An identity owned by another customer is taken over.
   */
  save(customer: Customer, previous?: Customer): Promise<void>;
  /** Stores the email address the customer left for a reply (`contact`); false when there is no such customer. */
  setContact(customerId: string, contact: { email: string; at: number }): Promise<boolean>;
}

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

export interface HistoryStore {
  /**
   * Appends to the conversation's history; returns the record's sequence number (1, 2, … per conversation). A `user`
   * record's id is remembered for `seen`. Call it in a transaction that locked the conversation first.
   */
  append(record: MessageRecord): Promise<number>;
  /** True once a customer message with this client id was stored (idempotency across restarts). */
  seen(conversationId: string, clientId: string): Promise<boolean>;
  /** The last `limit` records (only `roles` when given), oldest first. */
  recent(conversationId: string, limit: number, roles?: MessageRole[]): Promise<MessageRecord[]>;
  /** Records after `seq`, oldest first, with their sequence numbers. */
  since(conversationId: string, seq: number): Promise<{ seq: number; record: MessageRecord }[]>;
  /** The sequence number of the conversation's last record (0 when it has none). */
  lastSeq(conversationId: string): Promise<number>;
  /** Up to `limit` records before sequence number `before` (the newest when absent), oldest first. */
  page(conversationId: string, o: { before?: number; limit: number }): Promise<{ seq: number; record: MessageRecord }[]>;
  /**
   * Moves every record of `from` to the end of `into`, in order (each keeps its id, role, text, time and data; its
   * `conversationId` becomes `into`, its sequence number the next of `into`); `from` is left without records, and
   * `seen` answers for the moved customer messages in `into` only; `from` is numbered from 1 again. Resolves with how many moved: a second move of the
   * same conversation moves nothing. Call it in a transaction that locked both conversations (a visitor signing in).
   */
  move(from: string, into: string): Promise<number>;
}

export interface MagicLinkStore {
  /** `tokenHash`: the SHA-256 of the token; the token itself is never stored. */
  insert(tokenHash: string, link: MagicLink): Promise<void>;
  /** In a transaction: the link, locked until the transaction ends (single use under concurrency). */
  lock(tokenHash: string): Promise<MagicLink | undefined>;
  markUsed(tokenHash: string, at: number): Promise<void>;
  /** Deletes links that expired at or before `now`; resolves with how many. */
  pruneExpired(now: number): Promise<number>;
}

/** Agent accounts and the secrets they hold (src/agents/). Emails are unique case-insensitively. */
export interface AgentStore {
  /** Stores a new account; false (nothing written) when another account has this email in any case. */
  insert(agent: AgentAccount): Promise<boolean>;
  get(agentId: string): Promise<AgentAccount | undefined>;
  /** By email, case-insensitively. */
  byEmail(email: string): Promise<AgentAccount | undefined>;
  /** Every account, oldest first. */
  list(): Promise<AgentAccount[]>;
  /** Replaces an existing account's name, role, disabled flag and password hash (never its id or email). */
  update(agent: AgentAccount): Promise<void>;
  /** `hash`: the SHA-256 of the secret; the secret itself is never stored. */
  putCredential(hash: string, credential: AgentCredential): Promise<void>;
  getCredential(hash: string): Promise<AgentCredential | undefined>;
  /** In a transaction: the credential, locked until the transaction ends (single use under concurrency). */
  lockCredential(hash: string): Promise<AgentCredential | undefined>;
  /** True when there was one to remove. */
  removeCredential(hash: string): Promise<boolean>;
  /** One agent's credentials of a kind, oldest first, with their hashes. */
  credentials(agentId: string, kind: AgentCredentialKind): Promise<{ hash: string; credential: AgentCredential }[]>;
  /** Removes every credential of this kind the agent holds; resolves with how many. */
  removeCredentials(agentId: string, kind: AgentCredentialKind): Promise<number>;
  /** Removes credentials whose `expiresAt` is at or before `now`; resolves with how many. */
  pruneCredentials(now: number): Promise<number>;
}

/** What `agentInbox.claim` did: the conversation is the agent's now, or `holder` has it. */
export type InboxClaim = { ok: true; thread: InboxThread } | { ok: false; holder: InboxAgent };

/**
 * The agent inbox (src/inbox/): who holds a handed-over conversation, resolutions, internal notes, saved replies and
 * what each agent has read. Holds are a compare-and-set in the store: two agents (on any node) never both hold one.
 */
export interface AgentInboxStore {
  /**
   * Gives the conversation's handoff `handoffSince` to `agent` when nobody holds it (no thread, no holder, or a hold on
   * another handoff) or one of `from` holds it (a claim: `[agent.agentId]`; an assignment: the current holder's id).
   * Atomic: of concurrent claims exactly one wins; the others resolve with the winner as `holder`.
   */
  claim(conversationId: string, handoffSince: number, agent: InboxAgent, at: number, from: string[]): Promise<InboxClaim>;
  /** Ends the hold (release or resolve); `resolvedBy` records a resolution. Resolves the thread as left (undefined: none). */
  close(conversationId: string, handoffSince: number, at: number, resolvedBy?: InboxAgent): Promise<InboxThread>;
  thread(conversationId: string): Promise<InboxThread | undefined>;
  /** The threads of these conversations that exist, in no particular order. */
  threads(conversationIds: string[]): Promise<InboxThread[]>;
  /** Resolved threads, the most recently resolved first. */
  resolved(limit: number): Promise<InboxThread[]>;
  addNote(note: InboxNote): Promise<void>;
  /** The conversation's notes, oldest first. */
  notes(conversationId: string): Promise<InboxNote[]>;
  /** Stores (or replaces, by id) a saved reply; false (nothing written) when another reply has its shortcut. */
  putSavedReply(reply: SavedReply): Promise<boolean>;
  /** Every saved reply, by shortcut. */
  savedReplies(): Promise<SavedReply[]>;
  removeSavedReply(id: string): Promise<boolean>;
  /** The agent has read the conversation up to `at` (never moves back). */
  markRead(agentId: string, conversationId: string, at: number): Promise<void>;
  /** The agent's read marks of these conversations (absent: never read). */
  readMarks(agentId: string, conversationIds: string[]): Promise<Record<string, number>>;
}

export interface ProactiveStore {
  /** When this dedup key was last accepted for this customer (undefined: never, or pruned). */
  dedupSentAt(customerId: string, dedupKey: string): Promise<number | undefined>;
  /** Accepted proactive messages to this customer at a time after `sinceExclusive`. */
  countSentAfter(customerId: string, sinceExclusive: number): Promise<number>;
  recordSend(send: { customerId: string; messageId: string; at: number; channel: Channel; dedupKey?: string }): Promise<void>;
  /** Drops dedup keys older than the dedup window and sends older than the cap window; resolves with how many. */
  prune(o: { now: number; dedupWindowMs: number; capWindowMs: number }): Promise<number>;
}

export type NewJob<P> = Omit<Job<P>, 'seq'>;

/** The lease a claim takes: `token` is the claimer's, and only a write with it records the job's outcome. */
export interface JobClaim {
  now: number;
  /** The lease lasts until `now + leaseMs`; after that another claim may take the job (the handler is presumed lost). */
  leaseMs: number;
  limit: number;
  token: string;
  /**
   * Jobs whose key starts with one of these are passed over (not claimed, and they do not count towards `limit`):
   * a worker that has no room for a group of jobs (a webhook endpoint at its concurrency, or its circuit open)
   * leaves them stored and takes the others.
   */
  skipKeyPrefixes?: string[];
}

/** How much of a queue is stored: queued jobs, dead letters and finished jobs' kept ids (each until pruned). */
export interface JobCounts {
  queued: number;
  dead: number;
  keptIds: number;
}

/** What a worker needs to know between claims: how many jobs are stored and when the next may become claimable. */
export interface JobOutlook {
  /** Jobs of the queue stored now (due, waiting or leased by anyone). */
  queued: number;
  /**
   * The earliest time after `now` at which a key's first job becomes claimable (its `runAt`, or the end of its lease);
   * undefined when none will by itself (nothing stored, or only jobs due now).
   */
  nextAt?: number;
}

/** Written with `token`: the write happens only while the job's lease holds that token (resolves false otherwise). */
export interface LeaseCheck {
  token?: string;
}

/**
 * Durable jobs, per queue, with claims. Per key, jobs run one at a time in sequence order: only a key's first stored
 * job (its head) can be claimed, and it stays the head until it is finished or buried, so the next job of the key
 * waits for it (also while it waits for a retry or is leased). A claim leases jobs to the caller's token; `update`,
 * `finish` and `bury` with a token write nothing and resolve false once the lease went to another claim (expired and
 * taken) or the job is gone. Without a token they write unconditionally (imports, tools). The retry policy, attempts
 * and dead-lettering decisions are the queue's (src/jobs/queue.ts).
 */
export interface JobStore {
  /** Stores a job and gives it the queue's next sequence number; undefined when its id is known (queued, or kept as done). */
  insert<P>(queue: string, job: NewJob<P>): Promise<Job<P> | undefined>;
  get<P>(queue: string, seq: number): Promise<Job<P> | undefined>;
  /** Every stored job of the queue, in sequence order. */
  pending<P>(queue: string): Promise<Job<P>[]>;
  /**
   * Leases up to `limit` jobs to `token`, in sequence order: each the head of its key, due (`runAt <= now`) and not
   * leased (or its lease ended at or before `now`). Concurrent claims, from this process or another, never get the
   * same job while its lease lasts. Call it outside a transaction.
   */
  claim<P>(queue: string, c: JobClaim): Promise<Job<P>[]>;
  outlook(queue: string, now: number): Promise<JobOutlook>;
  /** Makes every job waiting for a later `runAt` due at `now`; resolves with how many. */
  expedite(queue: string, now: number): Promise<number>;
  /** Writes a job's new state (attempts, runAt, lastError) and gives its lease back. */
  update<P>(queue: string, job: Job<P>, o?: LeaseCheck): Promise<boolean>;
  /** Removes a finished job; with `keepId` its id stays known (refused by `insert`) until pruned. */
  finish(queue: string, job: Job<unknown>, o: { keepId: boolean; at: number } & LeaseCheck): Promise<boolean>;
  /** Moves a job to the dead letters (same `keepId` rule). */
  bury(queue: string, dead: DeadJob<unknown>, o: { keepId: boolean } & LeaseCheck): Promise<boolean>;
  knows(queue: string, id: string): Promise<boolean>;
  deadLetters<P>(queue: string, limit: number): Promise<DeadJob<P>[]>;
  /** Totals of the queue (not a page's). */
  counts(queue: string): Promise<JobCounts>;
  /** Forgets kept ids finished before `before`, and dead letters that failed before it; resolves with how many. */
  prune(queue: string, before: number): Promise<number>;
}

/**
 * A job stored by any process on the store (PostgreSQL: a NOTIFY, ids only); `rescan` when notices may have been
 * missed (the listening connection was lost and is back): look at every queue again.
 */
export type JobNotice = { queue: string; seq: number } | { rescan: true };

/** The WhatsApp channel's delivery bookkeeping (exactly-once sends across crashes, delivery states). */
export interface WhatsAppStore {
  delivery(providerMessageId: string): Promise<DeliveryRecord | undefined>;
  putDelivery(d: DeliveryRecord): Promise<void>;
  earlyStatus(providerMessageId: string): Promise<EarlyStatus | undefined>;
  putEarlyStatus(providerMessageId: string, s: EarlyStatus): Promise<void>;
  removeEarlyStatus(providerMessageId: string): Promise<void>;
  /** The provider accepted this outbound job's message. */
  sent(jobId: string): Promise<{ providerMessageId: string; at: number } | undefined>;
  putSent(jobId: string, v: { providerMessageId: string; at: number }): Promise<void>;
  /** A send of this job went out and its answer is not recorded yet. */
  sendAttempt(jobId: string): Promise<{ startedAt: number } | undefined>;
  putSendAttempt(jobId: string, v: { startedAt: number }): Promise<void>;
  removeSendAttempt(jobId: string): Promise<void>;
  /** An inbound message already answered as a confirmation (not a new message if its job runs again). */
  handled(waMessageId: string): Promise<boolean>;
  markHandled(waMessageId: string, at: number): Promise<void>;
  /** Forgets handled marks, sends and deliveries older than `before`; resolves with how many. */
  prune(before: number): Promise<number>;
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

export type TelemetryKind = 'events' | 'turnCalls';

export interface TelemetryFilter {
  /** `at` from and until, both inclusive, ms. */
  since?: number;
  until?: number;
  /** Exact, or a prefix ending in `.*`; for turn calls it filters `purpose`. */
  type?: string;
  conversationId?: string;
  customerId?: string;
  /** Matches records carrying this external id, or any of `customerIds` (the customer's own ids). */
  customerExternalId?: string;
  customerIds?: string[];
  turnId?: string;
  limit: number;
  /** The last id of the previous page. */
  cursor?: string;
  order: 'asc' | 'desc';
}

export interface TelemetryPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** Where the recorder puts records; the engine decides when they are encoded and how they are batched. */
export interface TelemetryWriter {
  addEvent(e: TelemetryEvent): void;
  addTurnCall(r: TurnCallRecord): void;
  /** Records added and not yet written. */
  pending(): number;
  /** Writes everything added so far in one batch; resolves once durable with how many records it wrote. */
  flush(): Promise<number>;
}

export interface TelemetryStore {
  writer(): TelemetryWriter;
  events(f: TelemetryFilter): Promise<TelemetryPage<TelemetryEvent>>;
  turnCalls(f: TelemetryFilter): Promise<TelemetryPage<TurnCallRecord>>;
  /** Every record with `since <= at <= until`, oldest first, streamed (stop iterating to stop reading). */
  window<K extends TelemetryKind>(kind: K, o: { since: number; until: number }): AsyncIterable<K extends 'events' ? TelemetryEvent : TurnCallRecord>;
  /** Conversation ids of the newest events, newest first, distinct, at most `limit`. */
  recentConversationIds(limit: number): Promise<string[]>;
  /** Deletes records older than `before`; resolves with how many. */
  prune(before: number): Promise<number>;
  /** Background upkeep (LMDB: folding conversation references into the index); no-ops where there is none. */
  start(): void;
  stop(): Promise<void>;
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

// ---- Cluster (issue 17): nodes and conversation ownership. Kept together in this block. ----------------------------
//
// Several Parley processes (nodes) may share one PostgreSQL database. Each node holds a lease on its row in `nodes`,
// renewed by heartbeats and measured in the database's time (`now()`), so the nodes' own clocks never decide who is
// alive. A conversation has at most one owner, recorded with an epoch (a fencing token) that every claim bumps; a
// write for a conversation checks, inside its own transaction, that the epoch it holds is still the current one.
// On LMDB one process holds the store: the cluster is that one node, kept in memory.

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
