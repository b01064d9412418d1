// Ordered schema migrations, run once each at start-up inside a transaction.
// Append only: never edit or reorder a migration that has shipped.
import type { Store } from './types.ts';

export interface Migration {
  version: number;
  description: string;
  /** Runs inside a write transaction; use the table's *InTx writes. */
  up(store: Store): void;
}

export const migrations: Migration[] = [
  {
    version: 1,
    description: 'initial tables',
    up() {
      // Tables are created on open; nothing to move yet.
    },
  },
  {
    version: 2,
    description: "reflection daemon's review index for conversations written before it existed",
    up(store) {
      // The key layout as it was when this shipped (src/daemon/review-index.ts); a migration never follows later changes.
      type Conversation = { conversationId: string; lastMessageAt?: number; reviewedAt?: number; followupPending?: unknown };
      const proactive = store.table<1>('proactive');
      for (const { value } of store.table<Conversation>('conversations').range()) {
        if (value.lastMessageAt !== undefined && (value.reviewedAt === undefined || value.reviewedAt < value.lastMessageAt)) {
          proactive.putInTx(['review', value.lastMessageAt, value.conversationId], 1);
        }
        if (value.followupPending) proactive.putInTx(['followup', value.conversationId], 1);
      }
    },
  },
  {
    version: 3,
    description: "WhatsApp de-dup records move from webhookSeen into the inbound queue's id index",
    up(store) {
      // Key layouts as they were when this shipped (src/channels/whatsapp.ts, src/jobs/queue.ts).
      const seen = store.table<number>('webhookSeen');
      const jobs = store.table<unknown>('jobs');
      for (const { key, value } of seen.range()) {
        if (typeof key !== 'string' || !key.startsWith('wa:')) continue;
        const idKey = ['id', 'wa-inbound', key];
        if (jobs.get(idKey) === undefined) jobs.putInTx(idKey, { doneAt: value });
        seen.removeInTx(key);
      }
    },
  },
];

export const LATEST_SCHEMA_VERSION = migrations[migrations.length - 1].version;
