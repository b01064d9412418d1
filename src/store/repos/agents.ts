// Agent accounts and the agent inbox (src/agents/, src/inbox/). Part of the store's interface (../repos.ts).
import type { AgentAccount, AgentCredential, AgentCredentialKind, InboxAgent, InboxNote, InboxThread, SavedReply } from '../model.ts';

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
