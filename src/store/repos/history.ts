// A conversation's message history, numbered per conversation. Part of the store's interface (../repos.ts).
import type { MessageRecord, MessageRole } from '../model.ts';

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
