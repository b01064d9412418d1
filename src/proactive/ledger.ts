// The proactive guardrail ledger: duplicate suppression, the daily cap and the
// WhatsApp 24-hour window, decided and recorded in ONE store transaction so
// concurrent sends cannot both pass. Everything lives in the `proactive` table
// (LMDB), so keys and counters survive restarts.
//
//   ['dedup', customerId, dedupKey]        → { sentAt, messageId }
//   ['sent',  customerId, at, messageId]   → { channel }      (sliding 24 h cap window)
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Customer } from '../customers/repo.ts';
import type { Store } from '../store/types.ts';

export const HOUR_MS = 3_600_000;
/** The daily cap is a sliding 24-hour window. */
export const CAP_WINDOW_MS = 24 * HOUR_MS;
/** WhatsApp free-form window after the customer's last inbound message. */
export const WHATSAPP_WINDOW_MS = 24 * HOUR_MS;

export type ReserveFailure = 'duplicate' | 'cap' | 'window';
export type ReserveResult = { ok: true; messageId: string } | { ok: false; failed: ReserveFailure };

export interface ReserveRequest {
  customerId: string;
  channel: 'web' | 'whatsapp';
  dedupKey?: string;
  hasTemplate: boolean;
  /** Used only when the customer record is not in the store; the stored record is authoritative. */
  lastInboundAt?: { web?: number; whatsapp?: number };
}

export interface ProactiveLedger {
  /**
   * Checks dedup, cap and window and records the send, in one transaction. `onReservedInTx` runs
   * inside that same transaction with the new messageId, so the delivery it writes (history entry,
   * outbound job) commits together with the reservation or not at all.
   */
  reserve(request: ReserveRequest, onReservedInTx?: (messageId: string) => void): Promise<ReserveResult>;
  /** Deletes dedup and sent entries no window needs any more. Returns how many were removed. */
  prune(): Promise<number>;
  /** Accepted proactive messages for this customer in the last 24 hours. */
  sentInWindow(customerId: string): number;
}

export interface ProactiveLedgerOptions {
  store: Store;
  clock: Clock;
  dailyCap: number;
  dedupWindowHours: number;
}

interface DedupEntry {
  sentAt: number;
  messageId: string;
}
interface SentEntry {
  channel: 'web' | 'whatsapp';
}

export function createProactiveLedger(options: ProactiveLedgerOptions): ProactiveLedger {
  const { store, clock, dailyCap } = options;
  const dedupWindowMs = options.dedupWindowHours * HOUR_MS;
  const table = store.table<DedupEntry | SentEntry>('proactive');
  const customers = store.table<Customer>('customers');

  /** Sends to this customer in the last 24 h (`at > now - 24 h`), counted by LMDB without decoding entries. */
  const countSent = (customerId: string, now: number) => {
    const since = now - CAP_WINDOW_MS;
    // Keys are ['sent', customerId, at, messageId]: starting after every key at exactly `since` counts `at > since`.
    return table.count({ start: ['sent', customerId, since, '\uffff'], end: ['sent', customerId, Infinity] });
  };

  /** Dedup, then cap, then window: the first that fails, or undefined when all pass. */
  const check = (req: ReserveRequest, now: number): ReserveFailure | undefined => {
    if (req.dedupKey !== undefined) {
      const seen = table.get(['dedup', req.customerId, req.dedupKey]) as DedupEntry | undefined;
      if (seen && now - seen.sentAt < dedupWindowMs) return 'duplicate';
    }
    if (countSent(req.customerId, now) >= dailyCap) return 'cap';
    if (req.channel === 'whatsapp' && !req.hasTemplate) {
      const stored = customers.get(req.customerId);
      const last = stored ? stored.lastInboundAt?.whatsapp : req.lastInboundAt?.whatsapp;
      if (last === undefined || now - last >= WHATSAPP_WINDOW_MS) return 'window';
    }
    return undefined;
  };

  return {
    reserve: (req, onReservedInTx) => {
      // A block decided on committed data holds at this instant (keys and sends are only added, and
      // only ones no window needs are pruned), so it needs no write transaction; a pass is re-checked
      // inside the transaction, where no other writer interleaves.
      const early = check(req, clock.now());
      if (early) return Promise.resolve({ ok: false, failed: early });
      return store.transaction((): ReserveResult => {
        const now = clock.now();
        const failed = check(req, now);
        if (failed) return { ok: false, failed };
        const messageId = `pm_${randomUUID()}`;
        if (req.dedupKey !== undefined) table.putInTx(['dedup', req.customerId, req.dedupKey], { sentAt: now, messageId });
        table.putInTx(['sent', req.customerId, now, messageId], { channel: req.channel });
        onReservedInTx?.(messageId);
        return { ok: true, messageId };
      });
    },

    prune: () =>
      store.transaction(() => {
        const now = clock.now();
        const stale: (string | number)[][] = [];
        for (const { key, value } of table.range({ start: ['dedup'], end: ['dedup', '\uffff'] })) {
          if (now - (value as DedupEntry).sentAt >= dedupWindowMs) stale.push(key as (string | number)[]);
        }
        for (const { key } of table.range({ start: ['sent'], end: ['sent', '\uffff'] })) {
          if (now - ((key as (string | number)[])[2] as number) >= CAP_WINDOW_MS) stale.push(key as (string | number)[]);
        }
        for (const key of stale) table.removeInTx(key);
        return stale.length;
      }),

    sentInWindow: (customerId) => countSent(customerId, clock.now()),
  };
}
