// The proactive ledger on LMDB, in `proactive`:
//   ['dedup', customerId, dedupKey]        → { sentAt, messageId }
//   ['sent',  customerId, at, messageId]   → { channel }      (the sliding 24 h cap window, counted by key)
import type { ProactiveStore } from '../../repos.ts';
import type { KvScope } from '../kv.ts';

interface DedupEntry {
  sentAt: number;
  messageId: string;
}

export function lmdbProactive(s: KvScope): ProactiveStore {
  return {
    dedupSentAt: async (customerId, dedupKey) => s.get<DedupEntry>('proactive', ['dedup', customerId, dedupKey])?.sentAt,
    // Keys sort by time within the customer: starting after every key at exactly `since` counts `at > since`,
    // and LMDB counts keys without decoding values.
    countSentAfter: async (customerId, since) => s.count('proactive', { start: ['sent', customerId, since, '\uffff'], end: ['sent', customerId, Infinity] }),
    recordSend: ({ customerId, messageId, at, channel, dedupKey }) =>
      s.atomically(async (tx) => {
        if (dedupKey !== undefined) await tx.put('proactive', ['dedup', customerId, dedupKey], { sentAt: at, messageId });
        await tx.put('proactive', ['sent', customerId, at, messageId], { channel });
      }),
    prune: ({ now, dedupWindowMs, capWindowMs }) =>
      s.atomically(async (tx) => {
        const stale: (string | number)[][] = [];
        for (const { key, value } of tx.range<DedupEntry>('proactive', { start: ['dedup'], end: ['dedup', '\uffff'] })) {
          if (now - value.sentAt >= dedupWindowMs) stale.push(key as (string | number)[]);
        }
        for (const { key } of tx.range('proactive', { start: ['sent'], end: ['sent', '\uffff'] })) {
          if (now - ((key as (string | number)[])[2] as number) >= capWindowMs) stale.push(key as (string | number)[]);
        }
        for (const key of stale) await tx.remove('proactive', key);
        return stale.length;
      }),
  };
}
