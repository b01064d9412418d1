// The agent inbox's messages (/api/v1/inbox/…, its live socket), one zod schema each, shared by the server and the
// inbox page (which imports the types, and the live frames' schemas to read what it is sent).
import { z } from 'zod';
import type { MessageSource } from '../../sdk/src/widget-protocol.ts';

const Text = z.string().trim().min(1, 'must not be empty').max(4000);

export const ListQuery = z.strictObject({
  view: z.enum(['waiting', 'mine', 'open', 'resolved']).default('waiting'),
  /** A customer's email, externalId or phone; with `telemetry.store_text`, also words of the conversation. */
  q: z.string().trim().max(200).optional(),
});
export const ReplyRequest = z.strictObject({ text: Text, id: z.string().min(1).max(200).optional() });
export const NoteRequest = z.strictObject({ text: Text });
export const AssignRequest = z.strictObject({ agentId: z.string().min(1).max(64) });
export const TypingRequest = z.strictObject({ on: z.boolean() });
export const SavedReplyRequest = z.strictObject({
  shortcut: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9-]{1,32}$/, 'letters, digits and dashes (up to 32)'),
  text: Text,
});

export interface InboxAgentRef {
  agentId: string;
  name: string;
}

export interface InboxItem {
  conversationId: string;
  channel: 'web' | 'whatsapp';
  state: string;
  customer: { customerId: string; externalId: string; email?: string; phone?: string };
  handoff?: { since: number; source: 'model' | 'api'; reason?: string };
  holder?: InboxAgentRef;
  resolvedAt?: number;
  resolvedBy?: InboxAgentRef;
  lastMessageAt?: number;
  /** Customer messages since this agent last read the conversation. */
  unread: number;
  /** The customer's last message (cut short). */
  preview?: string;
}

export interface InboxList {
  view: z.infer<typeof ListQuery>['view'];
  items: InboxItem[];
  counts: { waiting: number; mine: number; open: number };
  /** Unread customer messages in the agent's own conversations. */
  unreadMine: number;
  slaMinutes: number;
  /** Whether `q` also searched the conversations' words (`telemetry.store_text`). */
  textSearch: boolean;
}

/** One line of a conversation, whole: messages, what the assistant did, handoffs and internal notes, in order. */
export type TranscriptEntry =
  | { kind: 'customer'; id: string; at: number; text: string }
  /** `sources`: what a reply from the company's knowledge cites (as the widget shows them). */
  | { kind: 'assistant'; id: string; at: number; text: string; proactive?: boolean; sources?: MessageSource[] }
  | { kind: 'agent'; id: string; at: number; text: string; author: { name: string; agentId?: string } }
  | {
      kind: 'tool';
      id: string;
      at: number;
      name: string;
      args?: unknown;
      /** Absent while it runs. */
      ok?: boolean;
      result?: unknown;
      error?: string;
      durationMs?: number;
    }
  | { kind: 'confirmation'; id: string; at: number; name?: string; outcome: string; text: string; receipt?: { ok: boolean; text: string } }
  | { kind: 'handoff'; id: string; at: number; phase: string; reason?: string; by?: string; agent?: string }
  | { kind: 'note'; id: string; at: number; text: string; author: InboxAgentRef }
  /**
   * The conversation was resolved by `by`. `released`: the resolve ended a handoff (it went back to the assistant): the
   * entry stands in for that release, at its time; otherwise it is at the time of the resolve.
   */
  | { kind: 'resolved'; id: string; at: number; by: InboxAgentRef; released?: boolean };

export interface ConversationWhole {
  item: InboxItem;
  transcript: TranscriptEntry[];
  customer: {
    customerId: string;
    externalId: string;
    email?: string;
    phone?: string;
    verified: boolean;
    channels: ('web' | 'whatsapp')[];
    /** Their other conversations (another channel). */
    others: { conversationId: string; channel: 'web' | 'whatsapp'; state: string; lastMessageAt?: number }[];
  };
  /** Whether the widget is told when this agent types (web conversations). */
  typingIndicator: boolean;
}

export interface SavedReplyView {
  id: string;
  shortcut: string;
  text: string;
  createdBy: InboxAgentRef;
  createdAt: number;
}

export type Presence = 'online' | 'away';

export interface AgentPresence extends InboxAgentRef {
  presence: Presence | 'offline';
}

// ---- The live socket (/api/v1/inbox/live) ----

/** What happened to a conversation (every node hears it): the page reads what changed. */
export const InboxEventKind = z.enum(['handoff', 'customer', 'assistant', 'agent', 'claimed', 'assigned', 'released', 'resolved', 'note']);
export const InboxEventFrame = z.object({
  type: z.literal('event'),
  kind: InboxEventKind,
  conversationId: z.string(),
  at: z.number(),
  agent: z.object({ agentId: z.string(), name: z.string() }).optional(),
});
export const InboxPresenceFrame = z.object({
  type: z.literal('presence'),
  agents: z.array(z.object({ agentId: z.string(), name: z.string(), presence: z.enum(['online', 'away']) })),
});
export const InboxLiveFrame = z.discriminatedUnion('type', [InboxEventFrame, InboxPresenceFrame]);
/** page → server: this agent's presence (the page is visible, or not). */
export const InboxClientFrame = z.strictObject({ type: z.literal('presence'), presence: z.enum(['online', 'away']) });

export type InboxEventKind = z.infer<typeof InboxEventKind>;
export type InboxEventFrame = z.infer<typeof InboxEventFrame>;
export type InboxPresenceFrame = z.infer<typeof InboxPresenceFrame>;
export type InboxLiveFrame = z.infer<typeof InboxLiveFrame>;
export type InboxClientFrame = z.infer<typeof InboxClientFrame>;
