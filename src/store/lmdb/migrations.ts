// Ordered schema migrations of the LMDB engine, each run once at start-up inside a transaction.
// Append only: never edit or reorder a migration that has shipped.
import type { Kv, KvScope } from './kv.ts';

export interface Migration {
  version: number;
  description: string;
  up(tx: KvScope): Promise<void>;
}

export const migrations: Migration[] = [
  {
    version: 1,
    description: 'initial tables',
    async up() {
      // Tables are created on open; nothing to move yet.
    },
  },
  {
    version: 2,
    description: "reflection daemon's review index for conversations written before it existed",
    async up(tx) {
      // The key layout as it was when this shipped (src/store/lmdb/repos/conversations.ts); a migration never follows later changes.
      type Conversation = { conversationId: string; lastMessageAt?: number; reviewedAt?: number; followupPending?: unknown };
      for (const { value } of tx.range<Conversation>('conversations')) {
        if (value.lastMessageAt !== undefined && (value.reviewedAt === undefined || value.reviewedAt < value.lastMessageAt)) {
          await tx.put('proactive', ['review', value.lastMessageAt, value.conversationId], 1);
        }
        if (value.followupPending) await tx.put('proactive', ['followup', value.conversationId], 1);
      }
    },
  },
  {
    version: 3,
    description: "WhatsApp de-dup records move from webhookSeen into the inbound queue's id index",
    async up(tx) {
      // Key layouts as they were when this shipped (src/whatsapp/channel.ts, src/store/lmdb/repos/jobs.ts).
      for (const { key, value } of tx.range<number>('webhookSeen')) {
        if (typeof key !== 'string' || !key.startsWith('wa:')) continue;
        const idKey = ['id', 'wa-inbound', key];
        if (tx.get('jobs', idKey) === undefined) await tx.put('jobs', idKey, { doneAt: value });
        await tx.remove('webhookSeen', key);
      }
    },
  },
  {
    version: 4,
    description: 'anonymous widget customers move to their own identity namespace (externalId anon:<id>)',
    async up(tx) {
      // The layouts as they were when this shipped (src/store/lmdb/repos/customers.ts, src/customers/anonymous.ts).
      type Customer = { customerId: string; externalId: string; email?: string };
      for (const { key, value } of tx.range<Customer>('customers')) {
        // Only anonymous widget init ever stored a customer whose customerId is its externalId.
        if (value.customerId !== value.externalId || value.externalId.startsWith('anon:')) continue;
        const externalId = `anon:${value.externalId}`;
        await tx.put('customers', key, Object.assign({}, value, { externalId }));
        await tx.put('identities', `ext:${externalId}`, value.customerId);
        if (tx.get('identities', `ext:${value.externalId}`) === value.customerId) await tx.remove('identities', `ext:${value.externalId}`);
        const email = value.email && `email:${value.email.toLowerCase()}`;
        if (email && tx.get('identities', email) === value.customerId) await tx.remove('identities', email);
      }
    },
  },
];

export const latestVersion = (list: Migration[]) => Math.max(0, ...list.map((m) => m.version));
export const schemaVersion = (kv: Pick<Kv, 'get'>) => kv.get<number>('meta', 'schemaVersion') ?? 0;

/** Runs the migrations the store has not seen yet, in order; resolves with the version reached. */
export async function migrate(kv: Kv, list: Migration[] = migrations): Promise<number> {
  for (const m of [...list].sort((a, b) => a.version - b.version)) {
    if (m.version <= schemaVersion(kv)) continue;
    await kv.transaction(async (tx) => {
      await m.up(tx);
      await tx.put('meta', 'schemaVersion', m.version);
    });
  }
  return schemaVersion(kv);
}
