// Customers and their identities. A customer is found by its externalId (the
// integrator's own id), its email, or its WhatsApp phone (E.164).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Store } from '../store/types.ts';
import { isAnonymousExternalId } from './anonymous.ts';

export interface Customer {
  customerId: string;
  externalId: string;
  email?: string;
  phone?: string;
  createdAt: number;
  /** Proactive messaging consent; unset means not opted in. */
  optIn?: boolean;
  /** Last inbound message time per channel (the WhatsApp 24-hour window reads `whatsapp`). */
  lastInboundAt?: { web?: number; whatsapp?: number };
}

export type LinkResult =
  { ok: true; customer: Customer } | { ok: false; reason: 'unknown_customer' } | { ok: false; reason: 'conflict'; ownerExternalId: string };

export type IdentityKind = 'ext' | 'email' | 'phone';
const identityKey = (kind: IdentityKind, value: string) => `${kind}:${kind === 'email' ? value.toLowerCase() : value}`;

export interface CustomerRepo {
  get(customerId: string): Customer | undefined;
  findBy(kind: IdentityKind, value: string): Customer | undefined;
  /**
   * Finds the customer with this externalId or creates it, atomically; fills in
   * email/phone when given and not yet set.
   */
  upsert(fields: { externalId: string; email?: string; phone?: string; customerId?: string }): Promise<Customer>;
  /**
   * Links a phone (E.164) to an existing customer, checked and written in one transaction. A phone
   * owned by another customer is a conflict, unless that customer was first seen on WhatsApp
   * (its externalId is the phone): it gives the phone up.
   */
  linkPhone(externalId: string, phone: string): Promise<LinkResult>;
  setOptIn(externalId: string, optIn: boolean): Promise<Customer | undefined>;
  touchInbound(customerId: string, channel: 'web' | 'whatsapp', at: number): Promise<void>;
}

export function createCustomerRepo(store: Store, clock: Clock): CustomerRepo {
  const customers = store.table<Customer>('customers');
  const identities = store.table<string>('identities');

  const findBy = (kind: IdentityKind, value: string) => {
    const id = identities.get(identityKey(kind, value));
    return id ? customers.get(id) : undefined;
  };

  const update = (customerId: string, change: (c: Customer) => Customer | undefined) =>
    store.transaction(() => {
      const current = customers.get(customerId);
      if (!current) return undefined;
      const next = change(current);
      if (next) customers.putInTx(customerId, next);
      return next ?? current;
    });

  return {
    get: (customerId) => customers.get(customerId),
    findBy,
    upsert: (fields) =>
      store.transaction(() => {
        const existing = findBy('ext', fields.externalId);
        const c: Customer = existing
          ? { ...existing }
          : { customerId: fields.customerId ?? `cus_${randomUUID()}`, externalId: fields.externalId, createdAt: clock.now() };
        if (fields.email && !c.email) c.email = fields.email;
        if (fields.phone && !c.phone && !findBy('phone', fields.phone)) c.phone = fields.phone;
        customers.putInTx(c.customerId, c);
        identities.putInTx(identityKey('ext', c.externalId), c.customerId);
        // An anonymous visitor's email is a claim nobody verified: it stays out of the shared index (anonymous.ts).
        if (c.email && !isAnonymousExternalId(c.externalId)) identities.putInTx(identityKey('email', c.email), c.customerId);
        if (c.phone) identities.putInTx(identityKey('phone', c.phone), c.customerId);
        return c;
      }),
    linkPhone: (externalId, phone) =>
      store.transaction((): LinkResult => {
        const c = findBy('ext', externalId);
        if (!c) return { ok: false, reason: 'unknown_customer' };
        const previousOwner = findBy('phone', phone);
        if (previousOwner && previousOwner.customerId !== c.customerId && previousOwner.externalId !== phone) {
          return { ok: false, reason: 'conflict', ownerExternalId: previousOwner.externalId };
        }
        if (c.phone && c.phone !== phone) identities.removeInTx(identityKey('phone', c.phone));
        if (previousOwner && previousOwner.customerId !== c.customerId) {
          const { phone: _, ...rest } = previousOwner;
          customers.putInTx(previousOwner.customerId, rest as Customer);
        }
        const next = Object.assign({}, c, { phone });
        customers.putInTx(c.customerId, next);
        identities.putInTx(identityKey('phone', phone), c.customerId);
        return { ok: true, customer: next };
      }),
    setOptIn: async (externalId, optIn) => {
      const c = findBy('ext', externalId);
      if (!c) return undefined;
      return update(c.customerId, (cur) => Object.assign({}, cur, { optIn }));
    },
    touchInbound: async (customerId, channel, at) => {
      await update(customerId, (cur) =>
        Object.assign({}, cur, { lastInboundAt: Object.assign({}, cur.lastInboundAt, { [channel]: Math.max(at, cur.lastInboundAt?.[channel] ?? 0) }) }),
      );
    },
  };
}
