// Customers and their identities. A customer is found by its externalId (the
// integrator's own id), its email, or its WhatsApp identity: a phone (E.164)
// and/or a business-scoped user id (BSUID), Meta's id for users who may hide
// their number behind a username.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Store } from '../store/types.ts';
import { isAnonymousExternalId } from './anonymous.ts';

export interface Customer {
  customerId: string;
  externalId: string;
  email?: string;
  phone?: string;
  /** WhatsApp business-scoped user id: a username-only user is reachable by it alone. */
  bsuid?: string;
  createdAt: number;
  /** Proactive messaging consent; unset means not opted in. */
  optIn?: boolean;
  /** Last inbound message time per channel (the WhatsApp 24-hour window reads `whatsapp`). */
  lastInboundAt?: { web?: number; whatsapp?: number };
}

export type LinkResult =
  { ok: true; customer: Customer } | { ok: false; reason: 'unknown_customer' } | { ok: false; reason: 'conflict'; ownerExternalId: string };

export type IdentityKind = 'ext' | 'email' | 'phone' | 'bsuid';

/** A WhatsApp user as Meta names it: phone (E.164), BSUID, or both. */
export interface WhatsAppIdentity {
  phone?: string;
  bsuid?: string;
}

export type IdentityChangeResult =
  | { changed: true; customer: Customer }
  /** No customer has the previous ids (nothing to update), or the new ones already belong to it. */
  | { changed: false; customer?: Customer; reason: 'unknown_customer' | 'already_applied' };
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
  /**
   * The customer a WhatsApp message comes from, found by phone or BSUID or created (externalId: the phone,
   * else the BSUID), in one transaction. When Meta names both and they belong to two customers, the phone's
   * customer wins and takes the BSUID over; an identifier this message brings is linked to the customer.
   */
  resolveWhatsApp(ids: WhatsAppIdentity): Promise<Customer>;
  /**
   * A number or BSUID change (Meta's `system` messages): the customer known by `previous` gets `next`, and the
   * replaced identifiers no longer lead to it (a recycled number must not reach this customer's history).
   */
  changeWhatsAppIdentity(previous: WhatsAppIdentity, next: WhatsAppIdentity): Promise<IdentityChangeResult>;
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

  /** Inside a transaction: `kind` of `c` becomes `value`; the old value's identity goes, another owner gives it up. */
  const setWhatsAppIdInTx = (c: Customer, kind: 'phone' | 'bsuid', value: string): Customer => {
    const owner = findBy(kind, value);
    if (owner && owner.customerId !== c.customerId) {
      const { [kind]: _, ...rest } = owner;
      customers.putInTx(owner.customerId, rest as Customer);
    }
    const old = c[kind];
    if (old && old !== value) identities.removeInTx(identityKey(kind, old));
    identities.putInTx(identityKey(kind, value), c.customerId);
    return Object.assign({}, c, { [kind]: value });
  };

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
    resolveWhatsApp: (ids) => {
      // Nearly always the customer is known with exactly these ids: a read, no write transaction.
      const known = (ids.phone ? findBy('phone', ids.phone) : undefined) ?? (ids.bsuid ? findBy('bsuid', ids.bsuid) : undefined);
      if (known && (!ids.phone || known.phone === ids.phone) && (!ids.bsuid || known.bsuid === ids.bsuid)) return Promise.resolve(known);
      return store.transaction(() => {
        const byPhone = ids.phone ? findBy('phone', ids.phone) : undefined;
        const byBsuid = ids.bsuid ? findBy('bsuid', ids.bsuid) : undefined;
        const externalId = (ids.phone ?? ids.bsuid)!;
        let c: Customer = byPhone ?? byBsuid ?? findBy('ext', externalId) ?? { customerId: `cus_${randomUUID()}`, externalId, createdAt: clock.now() };
        const before = c;
        if (ids.phone && c.phone !== ids.phone) c = setWhatsAppIdInTx(c, 'phone', ids.phone);
        if (ids.bsuid && c.bsuid !== ids.bsuid) c = setWhatsAppIdInTx(c, 'bsuid', ids.bsuid);
        if (c !== before || (!byPhone && !byBsuid)) {
          customers.putInTx(c.customerId, c);
          identities.putInTx(identityKey('ext', c.externalId), c.customerId);
        }
        return c;
      });
    },
    changeWhatsAppIdentity: (previous, next) =>
      store.transaction((): IdentityChangeResult => {
        const known = (ids: WhatsAppIdentity) => (ids.bsuid ? findBy('bsuid', ids.bsuid) : undefined) ?? (ids.phone ? findBy('phone', ids.phone) : undefined);
        const c = known(previous);
        if (!c) {
          const already = known(next);
          return already ? { changed: false, customer: already, reason: 'already_applied' } : { changed: false, reason: 'unknown_customer' };
        }
        let updated = c;
        if (next.phone && updated.phone !== next.phone) updated = setWhatsAppIdInTx(updated, 'phone', next.phone);
        if (next.bsuid && updated.bsuid !== next.bsuid) updated = setWhatsAppIdInTx(updated, 'bsuid', next.bsuid);
        if (updated === c) return { changed: false, customer: c, reason: 'already_applied' };
        customers.putInTx(c.customerId, updated);
        return { changed: true, customer: updated };
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
