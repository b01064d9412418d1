// The conversation machine's vocabulary: its input, context, events and outputs (emitted events), and what its
// injected actors (the LLM step, the SDK invoke) take and give. Types only.
import type { HumanMode } from '../human.ts';

export type { HumanMode };

export type Channel = 'web' | 'whatsapp';

export interface ToolCall {
  id: string;
  name: string;
  args: unknown;
  requiresConfirmation: boolean;
  summary: string;
}

export type TurnEntry =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text?: string; toolCalls: ToolCall[] }
  | { role: 'tool'; callId: string; name: string; ok: boolean; content: string };

export interface LlmStepInput {
  conversationId: string;
  customerId: string;
  turnId: string;
  step: number;
  transcript: TurnEntry[];
  /**
   * The reply of the turn a burst waited for: it may not be stored yet when this turn starts (it is written with the
   * next write), so the step adds it to the history it reads when the stored records do not have it yet.
   */
  previousReply?: { turnId: string; text: string };
}

/** A source a reply cites as "[n]" (issue 36): an article of the knowledge base retrieved in the turn. */
export interface ReplySource {
  n: number;
  title: string;
  url?: string;
}

export type LlmStepOutput =
  /** `unanswered`: the reply says it cannot answer (nothing in the knowledge base, no answer from the model). */
  | { kind: 'reply'; text: string; sources?: ReplySource[]; unanswered?: true }
  | { kind: 'tools'; text?: string; calls: ToolCall[] }
  /** The model called the built-in `handoff` tool: a person takes the conversation over. */
  | { kind: 'handoff'; reason?: string };

/** Who resolved the conversation: the signed-in agent who pressed "resolve" in the inbox. */
export interface ResolvedBy {
  agentId: string;
  name: string;
}

export interface AgentAuthor {
  name: string;
  /** The signed-in agent who sent it (src/agents/); absent when a system sent it with the service secret. */
  agentId?: string;
}

/** An actor's output stamped with the time it finished (from the runtime's injected clock). */
export type Timed<T> = T & { at: number };

/** `receipt`: what the customer reads once a confirmed action ran (the backend's words, or derived by the runtime). */
export type InvokeOutcome = { ok: true; data: unknown; receipt?: string } | { ok: false; error: { message: string; code?: string }; receipt?: string };

export interface InvokeToolInput {
  invocationId: string;
  name: string;
  args: unknown;
  conversationId: string;
  customerId: string;
  /** The customer approved this call (a confirmation ran): its outcome gets a receipt worded from `summary`. */
  confirmed?: boolean;
  summary?: string;
}

export type ConversationOutput =
  | { type: 'typing'; on: boolean }
  /**
   * `replyTo` is the turn's first message; `answers` (when the turn answered a burst) every message it answered, in
   * order; `unanswered`: an apology or an "I don't know" instead of an answer.
   */
  | { type: 'reply'; id: string; turnId: string; text: string; replyTo: string; answers?: string[]; sources?: ReplySource[]; unanswered?: true }
  | { type: 'confirm'; id: string; turnId: string; name: string; args: unknown; summary: string }
  /** `cancelled`: a person took the conversation over while it waited (`reason: 'handoff'`); a late answer is refused. */
  | { type: 'confirmation'; id: string; turnId: string; name: string; outcome: 'approved' | 'denied' | 'expired' | 'cancelled'; reason?: 'handoff' }
  | { type: 'tool'; turnId: string; callId: string; name: string; phase: 'invoked'; args: unknown }
  /**
   * `content` is exactly what the LLM is given for this call. A confirmed call's outcome also names its confirmation
   * (`confirmationId`) and carries the `receipt` the customer reads ("Order 1001 cancelled" / "Could not …").
   */
  | {
      type: 'tool';
      turnId: string;
      callId: string;
      name: string;
      phase: 'result' | 'failed';
      content: string;
      durationMs?: number;
      error?: string;
      confirmationId?: string;
      receipt?: string;
    }
  | { type: 'turn'; turnId: string; phase: 'started' | 'ended'; messageId: string }
  /** `id`s of handoff outputs are unique within the conversation: `h:<since>`, `r:<since>`, `j:<agent message id>`. */
  /** `agentId`: the signed-in agent who asked for it through the API. */
  | { type: 'handoff'; id: string; phase: 'requested'; source: 'model' | 'api'; reason?: string; turnId?: string; agentId?: string }
  /**
   * `by: 'idle'`: `handoff.return_to_assistant_after_minutes` passed without an agent message. `agentId`: who released
   * it; `lastAgentId`: the last signed-in agent who wrote; `durationMs`: since the handoff (time to resolution);
   * `resolvedBy`: the release was an agent's resolve (the `resolve` event).
   */
  | {
      type: 'handoff';
      id: string;
      phase: 'released';
      by: 'agent' | 'idle';
      agentId?: string;
      lastAgentId?: string;
      durationMs?: number;
      resolvedBy?: ResolvedBy;
    }
  /**
   * The first message of an agent (or of another agent than the last one): "Alex joined". `waitedMs`: on the first
   * agent message of the handoff, how long the customer waited for it (time to first agent reply).
   */
  | { type: 'handoff'; id: string; phase: 'joined'; agent: AgentAuthor; waitedMs?: number }
  /**
   * No agent wrote within `handoff.offline_after_minutes`: the customer is asked for an email address (once). `since`:
   * when the handoff it belongs to started (the SDK's `offline` notice carries it).
   */
  | { type: 'handoff'; id: string; phase: 'offline'; since: number }
  | { type: 'agent'; id: string; text: string; author: AgentAuthor }
  /** A customer message while with a person: stored, and forwarded to the integrator instead of the LLM. */
  | { type: 'forward'; messageId: string; text: string }
  /** An agent resolved the conversation while no person had it (with a person, the `released` output carries it). */
  | { type: 'resolved'; id: string; by: ResolvedBy };

export interface ConversationInput {
  conversationId: string;
  customerId: string;
  channel: Channel;
  maxToolSteps: number;
  confirmationTimeoutMs: number;
  /** With a person: no agent message this long after the handoff → the `offline` notice (absent: never). */
  offlineAfterMs?: number;
  /** With a person: given back to the assistant after this long without an agent message (absent: never). */
  returnAfterMs?: number;
  /**
   * The gathering window: a turn starts this long after the last of a burst of customer messages (at most
   * GATHER_CAP windows after the first), so the burst is answered by one turn. 0: at once. Absent in old snapshots.
   */
  gatherMs?: number;
  /** false: a turn takes one queued message (one reply per message). Absent (old snapshots): true. */
  bursts?: boolean;
}

export type ConversationEvent =
  | { type: 'customer.message'; at: number; messageId: string; text: string }
  | { type: 'customer.confirm'; at: number; confirmationId: string; approve: boolean }
  | { type: 'restored'; at: number }
  /** `agentId`: the signed-in agent who asked (src/agents/). */
  | { type: 'handoff.request'; at: number; reason?: string; agentId?: string }
  /** `agentId`: the signed-in agent who released it (src/agents/). */
  | { type: 'handoff.release'; at: number; by: 'agent' | 'idle'; agentId?: string }
  /**
   * An agent resolved the conversation: with a person, it goes back to the assistant (the `released` output carries
   * `resolvedBy`); otherwise the resolve is recorded as it is (`resolved`).
   */
  | { type: 'resolve'; at: number; by: ResolvedBy }
  | { type: 'agent.message'; at: number; id: string; text: string; author: AgentAuthor };

export interface QueuedMessage {
  messageId: string;
  text: string;
  at: number;
}

export interface Turn {
  turnId: string;
  /** The first message the turn answers (its id names the turn). */
  messageId: string;
  /** Every message the turn answers, in order (absent in snapshots from before bursts: `[messageId]`). */
  messageIds?: string[];
  step: number;
  transcript: TurnEntry[];
  calls: ToolCall[];
  callIndex: number;
  callStartedAt?: number;
  pending?: { confirmationId: string; deadline: number };
  replyText?: string;
  /** The sources the reply cites (absent: none). */
  replySources?: ReplySource[];
  /** The reply is an apology or an "I don't know", not an answer. */
  replyUnanswered?: true;
  /** See LlmStepInput.previousReply. */
  previousReply?: { turnId: string; text: string };
}

export interface ConversationContext extends ConversationInput {
  queue: QueuedMessage[];
  /** Recently processed or queued message ids: a re-sent message is not answered twice. */
  recent: string[];
  lastAt: number;
  turn?: Turn;
  /** Set while a person has the conversation. */
  human?: HumanMode;
  /** The reply of the turn that just ended while messages waited (handed to the next turn, then dropped). */
  lastReply?: { turnId: string; text: string };
  /** The integrator asked for a person while a turn ran: handed over when it ends. */
  handoffAsked?: { reason?: string; at: number; agentId?: string };
  /**
   * The last agent message ids: a retried agent message (same idempotency key, so the same id) is shown once. Stored
   * with the snapshot in every write, so whichever node owns the conversation next knows them too.
   */
  agentIds?: string[];
}
