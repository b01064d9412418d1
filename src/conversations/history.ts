// Every message of a conversation, in order: customer, assistant, tool calls
// and results, confirmations. Key: [conversationId, seq]; seq is kept in the
// conversation's record and advanced inside the caller's transaction.
import type { Store } from '../store/types.ts';

export type MessageRole = 'user' | 'assistant' | 'tool' | 'confirmation';

export interface MessageRecord {
  id: string;
  conversationId: string;
  role: MessageRole;
  text: string;
  at: number;
  turnId?: string;
  proactive?: boolean;
  /** tool: name, args, ok; confirmation: name, outcome */
  data?: Record<string, unknown>;
}

export interface HistoryRepo {
  /** Inside a transaction: appends and returns the new seq. */
  appendInTx(record: MessageRecord): number;
  /** Inside a transaction: true once this client message id was stored (idempotency across passivation). */
  seenInTx(conversationId: string, clientId: string): boolean;
  seen(conversationId: string, clientId: string): boolean;
  markSeenInTx(conversationId: string, clientId: string): void;
  /** The last `limit` records, oldest first. */
  recent(conversationId: string, limit: number, roles?: MessageRole[]): MessageRecord[];
  /** The sequence number of the conversation's last record (0 when it has none). */
  lastSeq(conversationId: string): number;
  /** Records after `seq`, oldest first, with their sequence numbers. */
  since(conversationId: string, seq: number): { seq: number; record: MessageRecord }[];
  all(conversationId: string): MessageRecord[];
}

export function createHistoryRepo(store: Store): HistoryRepo {
  const messages = store.table<MessageRecord | number | true>('messages');
  const seqKey = (c: string) => ['seq', c];
  const msgKey = (c: string, seq: number) => ['m', c, seq];
  const seenKey = (c: string, id: string) => ['in', c, id];

  const recent = (conversationId: string, limit: number, roles?: MessageRole[]) => {
    const out: MessageRecord[] = [];
    for (const { value } of messages.range({ start: ['m', conversationId, Number.MAX_SAFE_INTEGER], end: ['m', conversationId, -1], reverse: true })) {
      const r = value as MessageRecord;
      if (roles && !roles.includes(r.role)) continue;
      out.push(r);
      if (out.length >= limit) break;
    }
    return out.reverse();
  };

  return {
    appendInTx(record) {
      const seq = ((messages.get(seqKey(record.conversationId)) as number | undefined) ?? 0) + 1;
      messages.putInTx(seqKey(record.conversationId), seq);
      messages.putInTx(msgKey(record.conversationId, seq), record);
      return seq;
    },
    seenInTx: (c, id) => messages.get(seenKey(c, id)) !== undefined,
    seen: (c, id) => messages.get(seenKey(c, id)) !== undefined,
    markSeenInTx: (c, id) => messages.putInTx(seenKey(c, id), true),
    recent,
    lastSeq: (c) => (messages.get(seqKey(c)) as number | undefined) ?? 0,
    since(c, seq) {
      const out: { seq: number; record: MessageRecord }[] = [];
      for (const { key, value } of messages.range({ start: msgKey(c, seq + 1), end: msgKey(c, Number.MAX_SAFE_INTEGER) })) {
        out.push({ seq: (key as [string, string, number])[2], record: value as MessageRecord });
      }
      return out;
    },
    all: (c) => recent(c, Number.MAX_SAFE_INTEGER),
  };
}

export const conversationIdFor = (customerId: string, channel: 'web' | 'whatsapp') => `conv_${channel}_${customerId}`;
