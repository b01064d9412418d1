// What the conversation host, its write loop, its in-doubt writes and the channels share: low in the folder, importing
// only the store's model, the repositories' types and the machine's outputs (no file of the host).
import type { ConversationOutput } from '../../machines/conversation.ts';
import type { ConversationMeta } from '../store/model.ts';
import type { StoreRepos } from '../store/repos.ts';
import type { ReplyDelta } from './reply-stream.ts';

export type { Channel, ConversationMeta, ConversationRecord, PendingConfirmation } from '../store/model.ts';

/**
 * A customer message on its way to the conversation. `content`: the message as structured data (a WhatsApp location,
 * photo, flow reply…), kept in history as `data.content`. `ack`: its acknowledgement to whoever sent it (the widget's
 * `ack` frame), sent by the channel's sink (`accepted`) once the message is durable, in order with the outputs of the
 * same write: a reply never reaches a widget ahead of the `ack` of the message it answers.
 */
export type CustomerInput = { type: 'customer'; messageId: string; text: string; content?: object; ack?: () => void };

/**
 * An output with the time it was produced (not the time it was committed): events and history keep the order things
 * happened in. `inboxId`: the inbox entry it came from, removed in the write that stores it.
 */
export type Pending = { o: ConversationOutput | CustomerInput; at: number; inboxId?: number };

/** What a channel does with a conversation's outputs. */
export interface ChannelSink {
  /** Inside the persist transaction: make the output durable for this channel (e.g. an outbound job). */
  write?(tx: StoreRepos, meta: ConversationMeta, output: ConversationOutput): Promise<void>;
  /** After commit: push it live (open widget sockets). Must not throw. */
  deliver?(meta: ConversationMeta, output: ConversationOutput): void;
  /** After commit, in order with `deliver`: a customer message is durable; acknowledge it to its sender. Must not throw. */
  accepted?(meta: ConversationMeta, input: CustomerInput): void;
  /** A piece of the reply being written: live only, at once, never stored (like `typing`). */
  stream?(meta: ConversationMeta, delta: ReplyDelta): void;
}

/** Sees every output (and customer message) once it is durable, in order; must not throw. */
export type OutputObserver = (meta: ConversationMeta, entry: Pending) => void;
/**
 * Writes of its own in a conversation write's transaction, for the outputs that write stores (outbound webhook events,
 * the outcome record), so that they exist exactly when those outputs do.
 */
export interface OutputRecorder {
  /** Whether it writes anything for these outputs (when no recorder does, the store may write without a transaction). */
  wants(meta: ConversationMeta, written: Pending[]): boolean;
  /** Its writes, in the transaction (only when it `wants` them); returns what to run once committed. Throwing aborts the write. */
  record(tx: StoreRepos, meta: ConversationMeta, written: Pending[]): Promise<() => void>;
}

export type HandoffResult = { ok: true; state: string } | { ok: false; code: 'not_found' | 'not_handed_off' };
