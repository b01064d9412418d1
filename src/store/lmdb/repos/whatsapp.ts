// The WhatsApp channel's bookkeeping on LMDB: `outbox` providerMessageId → delivery, "early:<wamid>" → a status
// that came before its send was recorded; `sent` jobId → accepted send; `sendAttempts` jobId → a send in flight;
// `webhookSeen` "handled:wa:<id>" → when an inbound message was answered as a confirmation.
import type { DeliveryRecord, EarlyStatus } from '../../model.ts';
import type { WhatsAppStore } from '../../repos.ts';
import type { KvScope } from '../kv.ts';

const earlyKey = (wamid: string) => `early:${wamid}`;
const handledKey = (waMessageId: string) => `handled:wa:${waMessageId}`;

export function lmdbWhatsApp(s: KvScope): WhatsAppStore {
  return {
    delivery: async (id) => s.get<DeliveryRecord>('outbox', id),
    putDelivery: (d) => s.put('outbox', d.providerMessageId, d),
    earlyStatus: async (id) => s.get<EarlyStatus>('outbox', earlyKey(id)),
    putEarlyStatus: (id, status) => s.put('outbox', earlyKey(id), status),
    removeEarlyStatus: (id) => s.remove('outbox', earlyKey(id)),
    sent: async (jobId) => s.get<{ providerMessageId: string; at: number }>('sent', jobId),
    putSent: (jobId, v) => s.put('sent', jobId, v),
    sendAttempt: async (jobId) => s.get<{ startedAt: number }>('sendAttempts', jobId),
    putSendAttempt: (jobId, v) => s.put('sendAttempts', jobId, v),
    removeSendAttempt: (jobId) => s.remove('sendAttempts', jobId),
    handled: async (id) => s.get('webhookSeen', handledKey(id)) !== undefined,
    markHandled: (id, at) => s.put('webhookSeen', handledKey(id), at),
    prune: (before) =>
      s.atomically(async (tx) => {
        let removed = 0;
        const drop = async (table: 'webhookSeen' | 'sent' | 'outbox', key: unknown) => {
          await tx.remove(table, key as string);
          removed++;
        };
        for (const { key, value } of tx.range<number>('webhookSeen')) if (value < before) await drop('webhookSeen', key);
        for (const { key, value } of tx.range<{ at: number }>('sent')) if (value.at < before) await drop('sent', key);
        for (const { key, value } of tx.range<DeliveryRecord | EarlyStatus>('outbox')) {
          if (('updatedAt' in value ? value.updatedAt : value.at) < before) await drop('outbox', key);
        }
        return removed;
      }),
  };
}
