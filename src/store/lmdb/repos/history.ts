// Conversation history on LMDB, in `messages`: ['seq', c] → the last sequence number; ['m', c, seq] → record;
// ['in', c, clientId] → true for every customer message stored (idempotency across restarts).
import type { MessageRecord } from '../../model.ts';
import type { HistoryStore } from '../../repos.ts';
import type { KvScope } from '../kv.ts';

const seqKey = (c: string) => ['seq', c];
const msgKey = (c: string, seq: number) => ['m', c, seq];
const seenKey = (c: string, id: string) => ['in', c, id];

export function lmdbHistory(s: KvScope): HistoryStore {
  return {
    append: (record) =>
      s.atomically(async (tx) => {
        const seq = (tx.get<number>('messages', seqKey(record.conversationId)) ?? 0) + 1;
        await tx.put('messages', seqKey(record.conversationId), seq);
        await tx.put('messages', msgKey(record.conversationId, seq), record);
        if (record.role === 'user') await tx.put('messages', seenKey(record.conversationId, record.id), true);
        return seq;
      }),
    seen: async (c, id) => s.get('messages', seenKey(c, id)) !== undefined,
    recent: async (c, limit, roles) => {
      const out: MessageRecord[] = [];
      for (const { value } of s.range<MessageRecord>('messages', { start: msgKey(c, Number.MAX_SAFE_INTEGER), end: msgKey(c, -1), reverse: true })) {
        if (roles && !roles.includes(value.role)) continue;
        out.push(value);
        if (out.length >= limit) break;
      }
      return out.reverse();
    },
    since: async (c, seq) => {
      const out: { seq: number; record: MessageRecord }[] = [];
      for (const { key, value } of s.range<MessageRecord>('messages', { start: msgKey(c, seq + 1), end: msgKey(c, Number.MAX_SAFE_INTEGER) })) {
        out.push({ seq: (key as [string, string, number])[2], record: value });
      }
      return out;
    },
    lastSeq: async (c) => s.get<number>('messages', seqKey(c)) ?? 0,
    page: async (c, { before, limit }) => {
      const out: { seq: number; record: MessageRecord }[] = [];
      const start = msgKey(c, (before ?? Number.MAX_SAFE_INTEGER) - 0.5);
      for (const { key, value } of s.range<MessageRecord>('messages', { start, end: msgKey(c, 0), reverse: true, limit })) {
        out.push({ seq: (key as [string, string, number])[2], record: value });
      }
      return out.reverse();
    },
    move: (from, into) =>
      from === into
        ? Promise.resolve(0)
        : s.atomically(async (tx) => {
            const moving = [...tx.range<MessageRecord>('messages', { start: msgKey(from, 0), end: msgKey(from, Number.MAX_SAFE_INTEGER) })];
            let seq = tx.get<number>('messages', seqKey(into)) ?? 0;
            for (const { key, value } of moving) {
              const record: MessageRecord = Object.assign({}, value, { conversationId: into });
              await tx.put('messages', msgKey(into, ++seq), record);
              await tx.remove('messages', key);
              if (record.role === 'user') {
                await tx.put('messages', seenKey(into, record.id), true);
                await tx.remove('messages', seenKey(from, record.id));
              }
            }
            // `from` starts again at 1, as on PostgreSQL (its numbers are its rows').
            if (moving.length) {
              await tx.put('messages', seqKey(into), seq);
              await tx.remove('messages', seqKey(from));
            }
            return moving.length;
          }),
  };
}
