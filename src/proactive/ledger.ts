// The proactive guardrail ledger: duplicate suppression, the daily cap and the
// WhatsApp 24-hour window, decided and recorded in ONE store transaction that
// first locks the customer, so concurrent sends to one customer cannot both pass
// (on PostgreSQL: SELECT … FOR UPDATE at READ COMMITTED, then every check reads
// the latest committed sends). Keys and counters are stored, so they survive restarts.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { WHATSAPP_WINDOW_MS } from '../customers/whatsapp-window.ts';
import type { Customer } from '../store/model.ts';
import type { StoreRepos, Store } from '../store/repos.ts';

export const HOUR_MS = 3_600_000;
/** The daily cap is a sliding 24-hour window. */
export const CAP_WINDOW_MS = 24 * HOUR_MS;

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
   * Checks dedup, cap and window and records the send, in one transaction. `onReserved` runs
   * inside that same transaction with the new messageId, so the delivery it writes (history entry,
   * outbound job) commits together with the reservation or not at all.
   */
  reserve(request: ReserveRequest, onReserved?: (tx: StoreRepos, messageId: string) => Promise<void>): Promise<ReserveResult>;
  /** Deletes dedup and sent entries no window needs any more. Returns how many were removed. */
  prune(): Promise<number>;
  /** Accepted proactive messages for this customer in the last 24 hours. */
  sentInWindow(customerId: string): Promise<number>;
}

export interface ProactiveLedgerOptions {
  store: Store;
  clock: Clock;
  dailyCap: number;
  dedupWindowHours: number;
}

export function createProactiveLedger(options: ProactiveLedgerOptions): ProactiveLedger {
  const { store, clock, dailyCap } = options;
  const dedupWindowMs = options.dedupWindowHours * HOUR_MS;

  /** Dedup, then cap, then window: the first that fails, or undefined when all pass. */
  const check = async (repos: StoreRepos, req: ReserveRequest, now: number, stored: Customer | undefined): Promise<ReserveFailure | undefined> => {
    if (req.dedupKey !== undefined) {
      const sentAt = await repos.proactive.dedupSentAt(req.customerId, req.dedupKey);
      if (sentAt !== undefined && now - sentAt < dedupWindowMs) return 'duplicate';
    }
    if ((await repos.proactive.countSentAfter(req.customerId, now - CAP_WINDOW_MS)) >= dailyCap) return 'cap';
    if (req.channel === 'whatsapp' && !req.hasTemplate) {
      const last = stored ? stored.lastInboundAt?.whatsapp : req.lastInboundAt?.whatsapp;
      if (last === undefined || now - last >= WHATSAPP_WINDOW_MS) return 'window';
    }
    return undefined;
  };

  return {
    reserve: async (req, onReserved) => {
      // A block decided on committed data holds at this instant (keys and sends are only added, and
      // only ones no window needs are pruned), so it needs no write transaction; a pass is re-checked
      // inside the transaction, after the customer's lock, where no other reservation interleaves.
      const early = await check(store, req, clock.now(), await store.customers.get(req.customerId));
      if (early) return { ok: false, failed: early };
      return store.transaction(async (tx): Promise<ReserveResult> => {
        const customer = await tx.customers.lock(req.customerId);
        const now = clock.now();
        const failed = await check(tx, req, now, customer);
        if (failed) return { ok: false, failed };
        const messageId = `pm_${randomUUID()}`;
        await tx.proactive.recordSend({ customerId: req.customerId, messageId, at: now, channel: req.channel, dedupKey: req.dedupKey });
        await onReserved?.(tx, messageId);
        return { ok: true, messageId };
      });
    },
    prune: () => store.proactive.prune({ now: clock.now(), dedupWindowMs, capWindowMs: CAP_WINDOW_MS }),
    sentInWindow: (customerId) => store.proactive.countSentAfter(customerId, clock.now() - CAP_WINDOW_MS),
  };
}
