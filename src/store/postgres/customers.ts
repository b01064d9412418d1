// Customers (one row each) and their identities (kind, value → customer; emails lower-cased), on PostgreSQL.
import { identitiesOf as indexedIdentities, type Customer, type IdentityKind } from '../model.ts';
import type { CustomerStore } from '../repos.ts';
import { first, prepared, type Db } from './db.ts';

interface CustomerRow {
  customer_id: string;
  external_id: string;
  email: string | null;
  phone: string | null;
  bsuid: string | null;
  created_at: number;
  opt_in: boolean | null;
  last_inbound_web: number | null;
  last_inbound_whatsapp: number | null;
  business_number_id: string | null;
  contact_email?: string | null;
  contact_email_at?: number | null;
}

const COLUMNS = 'customer_id, external_id, email, phone, bsuid, created_at, opt_in, last_inbound_web, last_inbound_whatsapp, business_number_id';

/** Read with the contact address, which only SET_CONTACT writes (save keeps it as stored). */
const READ = `${COLUMNS}, contact_email, contact_email_at`;
const GET = prepared('customers_get', `SELECT ${READ} FROM customers WHERE customer_id = $1`);
const LOCK = prepared('customers_lock', `SELECT ${READ} FROM customers WHERE customer_id = $1 FOR UPDATE`);
const FIND = prepared('customers_find', `SELECT ${READ} FROM customer_identities i JOIN customers c USING (customer_id) WHERE i.kind = $1 AND i.value = $2`);
const SET_CONTACT = prepared(
  'customers_set_contact',
  'UPDATE customers SET contact_email = $2, contact_email_at = $3 WHERE customer_id = $1 RETURNING 1 AS ok',
);
const LOCK_IDENTITY = prepared('customers_lock_identity', `SELECT pg_advisory_xact_lock(hashtextextended('identity:' || $1 || ':' || $2, 0))`);
// One round trip: the row, the identities it gives up (still its own), the ones it holds (taken over if another had them).
const SAVE = prepared(
  'customers_save',
  `WITH saved AS (
     INSERT INTO customers (${COLUMNS}) VALUES ($1, $2, $3, $4, $13, $5, $6, $7, $8, $14)
     ON CONFLICT (customer_id) DO UPDATE SET external_id = EXCLUDED.external_id, email = EXCLUDED.email, phone = EXCLUDED.phone,
       bsuid = EXCLUDED.bsuid, created_at = EXCLUDED.created_at, opt_in = EXCLUDED.opt_in, last_inbound_web = EXCLUDED.last_inbound_web,
       last_inbound_whatsapp = EXCLUDED.last_inbound_whatsapp, business_number_id = EXCLUDED.business_number_id
   ), released AS (
     DELETE FROM customer_identities i USING unnest($11::text[], $12::text[]) AS r(kind, value)
     WHERE i.kind = r.kind AND i.value = r.value AND i.customer_id = $1
   ), held AS (
     INSERT INTO customer_identities (kind, value, customer_id)
     SELECT kind, value, $1 FROM unnest($9::text[], $10::text[]) AS h(kind, value)
     ON CONFLICT (kind, value) DO UPDATE SET customer_id = EXCLUDED.customer_id
     WHERE customer_identities.customer_id <> EXCLUDED.customer_id
   )
   SELECT 1`,
);

/** The identity's stored value: emails match case-insensitively. */
export const identityValue = (kind: IdentityKind, value: string) => (kind === 'email' ? value.toLowerCase() : value);

/** The identities that lead to the customer (model.ts: an anonymous visitor's email is not one), keyed for a diff. */
function identitiesOf(c: Customer | undefined): Map<string, [IdentityKind, string]> {
  const out = new Map<string, [IdentityKind, string]>();
  for (const [kind, value] of indexedIdentities(c)) out.set(`${kind}:${identityValue(kind, value)}`, [kind, identityValue(kind, value)]);
  return out;
}

function toCustomer(r: CustomerRow | undefined): Customer | undefined {
  if (!r) return undefined;
  const c: Customer = { customerId: r.customer_id, externalId: r.external_id, createdAt: r.created_at };
  if (r.email !== null) c.email = r.email;
  if (r.phone !== null) c.phone = r.phone;
  if (r.bsuid !== null) c.bsuid = r.bsuid;
  if (r.opt_in !== null) c.optIn = r.opt_in;
  if (r.last_inbound_web !== null || r.last_inbound_whatsapp !== null) {
    c.lastInboundAt = {};
    if (r.last_inbound_web !== null) c.lastInboundAt.web = r.last_inbound_web;
    if (r.last_inbound_whatsapp !== null) c.lastInboundAt.whatsapp = r.last_inbound_whatsapp;
  }
  if (r.business_number_id !== null) c.businessNumberId = r.business_number_id;
  if (r.contact_email != null && r.contact_email_at != null) c.contact = { email: r.contact_email, at: Number(r.contact_email_at) };
  return c;
}

export function postgresCustomers(db: Db): CustomerStore {
  return {
    get: async (customerId) => toCustomer(await first(db.rows<CustomerRow>(GET, [customerId]))),
    findBy: async (kind, value) => toCustomer(await first(db.rows<CustomerRow>(FIND, [kind, identityValue(kind, value)]))),
    lock: async (customerId) => toCustomer(await first(db.rows<CustomerRow>(LOCK, [customerId]))),
    lockIdentity: async (kind, value) => {
      await db.rows(LOCK_IDENTITY, [kind, identityValue(kind, value)]);
    },
    save: async (c, previous) => {
      const held = identitiesOf(c);
      const released = [...identitiesOf(previous)].filter(([key]) => !held.has(key)).map(([, identity]) => identity);
      await db.rows(SAVE, [
        c.customerId,
        c.externalId,
        c.email ?? null,
        c.phone ?? null,
        c.createdAt,
        c.optIn ?? null,
        c.lastInboundAt?.web ?? null,
        c.lastInboundAt?.whatsapp ?? null,
        [...held.values()].map(([kind]) => kind),
        [...held.values()].map(([, value]) => value),
        released.map(([kind]) => kind),
        released.map(([, value]) => value),
        c.bsuid ?? null,
        c.businessNumberId ?? null,
      ]);
    },
    setContact: async (customerId, contact) => (await db.rows(SET_CONTACT, [customerId, contact.email, contact.at])).length > 0,
  };
}
