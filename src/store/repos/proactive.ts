// The proactive ledger: dedup keys and per-customer caps (src/proactive/). Part of the store's interface (../repos.ts).
import type { Channel } from '../model.ts';

export interface ProactiveStore {
  /** When this dedup key was last accepted for this customer (undefined: never, or pruned). */
  dedupSentAt(customerId: string, dedupKey: string): Promise<number | undefined>;
  /** Accepted proactive messages to this customer at a time after `sinceExclusive`. */
  countSentAfter(customerId: string, sinceExclusive: number): Promise<number>;
  recordSend(send: { customerId: string; messageId: string; at: number; channel: Channel; dedupKey?: string }): Promise<void>;
  /** Drops dedup keys older than the dedup window and sends older than the cap window; resolves with how many. */
  prune(o: { now: number; dedupWindowMs: number; capWindowMs: number }): Promise<number>;
}
