// Customers (src/customers/) and the magic links that sign them in (src/identity/). Part of the store's interface
// (../repos.ts).
import type { Customer, IdentityKind, MagicLink } from '../model.ts';

export interface CustomerStore {
  get(customerId: string): Promise<Customer | undefined>;
  findBy(kind: IdentityKind, value: string): Promise<Customer | undefined>;
  /** In a transaction: the customer, locked until the transaction ends. */
  lock(customerId: string): Promise<Customer | undefined>;
  /** In a transaction: holds every other transaction that locks the same identity (existing or not) until this one ends. */
  lockIdentity(kind: IdentityKind, value: string): Promise<void>;
  /**
   * Writes the customer and points its identities (externalId, email, phone) at it. Identities `previous` had and
   * `customer` no longer has are released. An identity owned by another customer is taken over.
   */
  save(customer: Customer, previous?: Customer): Promise<void>;
  /** Stores the email address the customer left for a reply (`contact`); false when there is no such customer. */
  setContact(customerId: string, contact: { email: string; at: number }): Promise<boolean>;
}

export interface MagicLinkStore {
  /** `tokenHash`: the SHA-256 of the token; the token itself is never stored. */
  insert(tokenHash: string, link: MagicLink): Promise<void>;
  /** In a transaction: the link, locked until the transaction ends (single use under concurrency). */
  lock(tokenHash: string): Promise<MagicLink | undefined>;
  markUsed(tokenHash: string, at: number): Promise<void>;
  /** Deletes links that expired at or before `now`; resolves with how many. */
  pruneExpired(now: number): Promise<number>;
}
