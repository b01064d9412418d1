// What a running Parley has stored, read beside it on either engine, for the checks that look at everything of a
// kind (no side effect at all, exactly one customer) rather than through one repository's operations. On
// PostgreSQL a row reads as an object with camel-cased column names (`job_id` → `jobId`).
import pg from 'pg';
import type { Customer } from '../../src/store/model.ts';
import type { Store } from '../../src/store/repos.ts';
import type { TableName } from '../../src/store/lmdb/kv.ts';
import { lmdbKv } from './store.ts';

export type StoredKind = 'customers' | 'identities' | 'magicLinks' | 'proactive' | 'jobs' | 'deliveries' | 'webhookSeen' | 'sent' | 'sendAttempts';

const LMDB_TABLES: Record<StoredKind, TableName[]> = {
  customers: ['customers'],
  identities: ['identities'],
  magicLinks: ['magicLinks'],
  proactive: ['proactive'],
  jobs: ['jobs'],
  deliveries: ['outbox'],
  webhookSeen: ['webhookSeen'],
  sent: ['sent'],
  sendAttempts: ['sendAttempts'],
};
const POSTGRES_TABLES: Record<StoredKind, string[]> = {
  customers: ['customers'],
  identities: ['customer_identities'],
  magicLinks: ['magic_links'],
  proactive: ['proactive_sends', 'proactive_dedup'],
  jobs: ['jobs', 'job_ids', 'job_dead_letters'],
  deliveries: ['wa_deliveries'],
  webhookSeen: ['wa_handled'],
  sent: ['wa_sent'],
  sendAttempts: ['wa_send_attempts'],
};

interface Running {
  services: { store: Store; config: { storage: { url?: string } } };
}

const camel = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), v]));

/** Rows of a query on the PostgreSQL database at `url`. */
export async function queryDatabase<R extends Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Each table's rows, camel-cased and in a stable order, read over one connection. */
async function postgresTables(url: string, tables: string[]): Promise<Record<string, unknown>[][]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Record<string, unknown>[][] = [];
    for (const table of tables) out.push((await client.query(`SELECT * FROM ${table}`)).rows.map(camel));
    return out;
  } finally {
    await client.end();
  }
}

const stableOrder = (rows: Record<string, unknown>[]) => rows.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

/** Every stored value of `kind`, in a stable order. */
export async function storedValues<V = Record<string, unknown>>(p: Running, kind: StoredKind): Promise<V[]> {
  const { store } = p.services;
  if (store.engine === 'lmdb') return LMDB_TABLES[kind].flatMap((t) => [...lmdbKv(store).range<V>(t)].map((r) => r.value));
  return stableOrder((await postgresTables(p.services.config.storage.url!, POSTGRES_TABLES[kind])).flat()) as V[];
}

/** Everything stored of these kinds, as one string: compare two to see whether anything was written. */
export async function dumpStored(p: Running, kinds: StoredKind[]): Promise<string> {
  const { store } = p.services;
  if (store.engine !== 'lmdb') {
    const tables = await postgresTables(
      p.services.config.storage.url!,
      kinds.flatMap((k) => POSTGRES_TABLES[k]),
    );
    let at = 0;
    return kinds.map((k) => JSON.stringify(stableOrder(tables.slice(at, (at += POSTGRES_TABLES[k].length)).flat()))).join('|');
  }
  // LMDB keeps part of a record in its key (a magic link's hash, a dedup key's customer): keys count too.
  return kinds.map((k) => JSON.stringify(LMDB_TABLES[k].flatMap((t) => [...lmdbKv(store).range(t)].map((r) => [r.key, r.value])))).join('|');
}

/** Every customer, whole (through the repository), in a stable order. */
export async function allCustomers(p: Running): Promise<Customer[]> {
  const ids = (await storedValues<{ customerId: string }>(p, 'customers')).map((c) => c.customerId).sort();
  const customers: Customer[] = [];
  for (const id of ids) {
    const c = await p.services.store.customers.get(id);
    if (c) customers.push(c);
  }
  return customers;
}
