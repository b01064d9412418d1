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
  {
    version: 4,
    description: 'anonymous widget customers move to their own identity namespace (externalId anon:<id>)',
    up(store) {
      // The layouts as they were when this shipped (src/customers/repo.ts, src/customers/anonymous.ts).
      type Customer = { customerId: string; externalId: string; email?: string };
      const customers = store.table<Customer>('customers');
      const identities = store.table<string>('identities');
      for (const { key, value } of customers.range()) {
        // Only anonymous widget init ever stored a customer whose customerId is its externalId.
        if (value.customerId !== value.externalId || value.externalId.startsWith('anon:')) continue;
        const externalId = `anon:${value.externalId}`;
        customers.putInTx(key, Object.assign({}, value, { externalId }));
        identities.putInTx(`ext:${externalId}`, value.customerId);
        if (identities.get(`ext:${value.externalId}`) === value.customerId) identities.removeInTx(`ext:${value.externalId}`);
        const email = value.email && `email:${value.email.toLowerCase()}`;
        if (email && identities.get(email) === value.customerId) identities.removeInTx(email);
      }
    },
  },
];

export const LATEST_SCHEMA_VERSION = migrations[migrations.length - 1].version;
