// Customers on LMDB: `customers` customerId → Customer; `identities` "<kind>:<value>" → customerId (emails
// lower-cased). Transactions run one at a time, so the locks are no-ops.
import { identitiesOf, type Customer, type IdentityKind } from '../../model.ts';
import type { CustomerStore } from '../../repos.ts';
import type { KvScope } from '../kv.ts';

export const identityKey = (kind: IdentityKind, value: string) => `${kind}:${kind === 'email' ? value.toLowerCase() : value}`;

export function lmdbCustomers(s: KvScope): CustomerStore {
  const get = async (customerId: string) => s.get<Customer>('customers', customerId);
  const findBy = async (kind: IdentityKind, value: string) => {
    const id = s.get<string>('identities', identityKey(kind, value));
    return id ? s.get<Customer>('customers', id) : undefined;
  };
  return {
    get,
    findBy,
    lock: get,
    lockIdentity: async () => undefined,
    save: (customer, previous) =>
      s.atomically(async (tx) => {
        const before = identitiesOf(previous);
        const after = identitiesOf(customer);
        for (const [kind, old] of before) {
          if (after.get(kind) === old) continue;
          // Released only while it still leads here: another customer may have taken it over meanwhile.
          if (tx.get<string>('identities', identityKey(kind, old)) === customer.customerId) await tx.remove('identities', identityKey(kind, old));
        }
        // `contact` is setContact's: kept as stored, whatever the caller read.
        const { contact: _given, ...rest } = customer;
        const stored = tx.get<Customer>('customers', customer.customerId)?.contact;
        await tx.put('customers', customer.customerId, stored ? Object.assign(rest, { contact: stored }) : rest);
        // Unchanged identities are not rewritten: most saves (an inbound time, an opt-in) touch none.
        for (const [kind, value] of after) if (before.get(kind) !== value) await tx.put('identities', identityKey(kind, value), customer.customerId);
      }),
    setContact: (customerId, contact) =>
      s.atomically(async (tx) => {
        const c = tx.get<Customer>('customers', customerId);
        if (!c) return false;
        await tx.put('customers', customerId, Object.assign({}, c, { contact: { email: contact.email, at: contact.at } }));
        return true;
      }),
  };
}
