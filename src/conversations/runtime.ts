// What the host's parts share (host.ts, conversation-actors.ts, conversation-write.ts, cluster-inbox.ts): the host's
// dependencies, one live conversation (`Active`), and the runtime every part is handed (no part imports another's
// closure). Types only, and one error class.
import type { Actor } from 'xstate';
import type { conversationMachine, InvokeOutcome, InvokeToolInput, LlmStepInput, LlmStepOutput, Timed } from '../../machines/conversation.ts';
import type { ConversationOwnership } from '../cluster/conversation-ownership.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import type { Channel, ConversationMeta, ConversationRecord } from '../store/model.ts';
import type { LiveStep } from './llm-step.ts';
import type { ChannelSink, OutputObserver, OutputRecorder, Pending } from './types.ts';
import type { WriteLoop } from './write-loop.ts';

export interface HostDeps {
  services: Services;
  /** Stamps its output with `at` (the clock's time when the LLM answered). */
  llmStep: (input: LlmStepInput, live: LiveStep) => Promise<Timed<LlmStepOutput>>;
  invokeTool: (input: InvokeToolInput, meta: ConversationMeta) => Promise<InvokeOutcome>;
  sinks: Partial<Record<Channel, ChannelSink>>;
  /** Whether a backend's SDK has registered functions (tools-ready.ts); absent: not checked. */
  sdk?: { registered(): boolean; onChange(listener: () => void): () => void };
  /** After each commit, in order (the SDK's handoff notifications). */
  observers?: OutputObserver[];
  /**
   * Inside the persist transaction, with the outputs it writes: outbound webhook events (an event exists exactly when
   * its fact does) and the outcome record (folded in with the facts that change it).
   */
  recorders?: OutputRecorder[];
  /**
   * Several nodes on one database (issue 17): claims and fencing, and how to wake the owner of a conversation this
   * node does not own once an event is in its inbox. Without it every conversation is this process's (tests of the
   * host alone).
   */
  cluster?: {
    ownership: ConversationOwnership;
    notifyOwner(nodeId: string, conversationId: string): Promise<void>;
    /** False once this node may have lost its lease: nothing live (typing, reply deltas) is shown then. */
    holdsLease(): boolean;
  };
  /** Registration with the supervisor runtime (diagnostics list every live actor). */
  lifecycle?: {
    activated(meta: ConversationMeta, actor: Actor<typeof conversationMachine>): void;
    passivated(conversationId: string): void;
  };
}

/** One live conversation: its actor and its write loop. */
export interface Active {
  meta: ConversationMeta;
  actor: Actor<typeof conversationMachine>;
  writes: WriteLoop;
  lastActiveAt: number;
  /** Restored mid-turn: until then, a call to a function not (yet) registered waits for the SDK to come back. */
  resumeUntil?: number;
  /** The fencing epoch this node holds the conversation at (set when the host runs in a cluster). */
  epoch?: number;
  /** Inbox entries handed to the actor (not applied twice while their removal is being written). */
  inboxTaken: Set<number>;
  /**
   * The record as this actor's last write left it, and its version (none before its first write: the record it was
   * restored from). The next write needs no read while nobody else wrote it.
   */
  written?: { fields: Omit<ConversationRecord, 'snapshot'>; version?: number };
}

/** The conversation belongs to another live node: its events go to that node's inbox. */
export class HeldElsewhere extends Error {
  constructor(readonly owner: string) {
    super(`the conversation is owned by node ${owner}`);
  }
}

/** What every part of the host is handed. */
export interface Runtime {
  deps: HostDeps;
  log: Logger;
  active: Map<string, Active>;
  /**
   * Conversations dropped after repeated write failures, and until when (ms) they rest: nothing but a new event or
   * their own timer brings them back (the cluster's takeover sweep leaves them alone, as LMDB has none).
   */
  resting: Map<string, number>;
  /** The host is stopping: no retry, no reactivation. */
  stopping(): boolean;
  /** The conversation's actor: the live one, or one restored from its stored record (claimed first in a cluster). */
  activate(meta: ConversationMeta): Promise<Active>;
  /**
   * A stopped actor's write failed because the store did not answer: it may have committed (in-doubt-writes.ts).
   * `afterCommit`: what its transaction prepared to run once committed (its recorders').
   */
  inDoubt(meta: ConversationMeta, entries: Pending[], afterCommit: (() => void)[]): void;
}
