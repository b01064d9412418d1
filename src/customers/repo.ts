// Customers and their identities. A customer is found by its externalId (the
// integrator's own id), its email, or its WhatsApp identity: a phone (E.164)
// and/or a business-scoped user id (BSUID), Meta's id for users who may hide
// their number behind a username. The rules live here; the store keeps records.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Customer, IdentityKind } from '../store/model.ts';
import type { CustomerStore, Store } from '../store/repos.ts';

export type { Customer, IdentityKind } from '../store/model.ts';

export type LinkResult =
  { ok: true; customer: Customer } | { ok: false; reason: 'unknown_customer' } | { ok: false; reason: 'conflict'; ownerExternalId: string };

/** A WhatsApp user as Meta names it: phone (E.164), BSUID, or both. */
export interface WhatsAppIdentity {
  phone?: string;
  bsuid?: string;
}

export type IdentityChangeResult =
  | { changed: true; customer: Customer }
  /** No customer has the previous ids (nothing to update), or the new ones already belong to it. */
  | { changed: false; customer?: Customer; reason: 'unknown_customer' | 'already_applied' };

export interface CustomerRepo {
  get(customerId: string): Promise<Customer | undefined>;
  findBy(kind: IdentityKind, value: string): Promise<Customer | undefined>;
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
  /**
   * Records an inbound message's time (the channel's latest wins). `businessNumberId`: the WhatsApp business number
   * it reached (Meta's phone_number_id), kept when this message is the customer's latest on WhatsApp.
   */
  touchInbound(customerId: string, channel: 'web' | 'whatsapp', at: number, businessNumberId?: string): Promise<void>;
  /** The customer's locale as their widget says it (`init.locale`): written only when it changed (one read otherwise). */
  setLocale(customerId: string, locale: string): Promise<void>;
}

export function createCustomerRepo(store: Store, clock: Clock): CustomerRepo {
  const update = (customerId: string, change: (c: Customer) => Customer | undefined) =>
    store.transaction(async (tx) => {
      const current = await tx.customers.lock(customerId);
      if (!current) return undefined;
      const next = change(current);
      if (next) await tx.customers.save(next, current);
      return next ?? current;
    });

  /** In a transaction: `kind` of `c` becomes `value`; another owner gives it up. */
  const setWhatsAppId = async (customers: CustomerStore, c: Customer, kind: 'phone' | 'bsuid', value: string): Promise<Customer> => {
    const owner = await customers.findBy(kind, value);
    if (owner && owner.customerId !== c.customerId) {
      const { [kind]: _, ...rest } = owner;
      await customers.save(rest as Customer, owner);
    }
    return Object.assign({}, c, { [kind]: value });
  };

  return {
    get: (customerId) => store.customers.get(customerId),
    findBy: (kind, value) => store.customers.findBy(kind, value),
    upsert: (fields) =>
      store.transaction(async ({ customers }) => {
        await customers.lockIdentity('ext', fields.externalId);
        const existing = await customers.findBy('ext', fields.externalId);
        const c: Customer = existing
          ? Object.assign({}, existing)
          : { customerId: fields.customerId ?? `cus_${randomUUID()}`, externalId: fields.externalId, createdAt: clock.now() };
        if (fields.email && !c.email) c.email = fields.email;
        if (fields.phone && !c.phone && !(await customers.findBy('phone', fields.phone))) c.phone = fields.phone;
        await customers.save(c, existing);
        return c;
      }),
    linkPhone: (externalId, phone) =>
      store.transaction(async ({ customers }): Promise<LinkResult> => {
        await customers.lockIdentity('phone', phone);
        const c = await customers.findBy('ext', externalId);
        if (!c) return { ok: false, reason: 'unknown_customer' };
        const previousOwner = await customers.findBy('phone', phone);
        if (previousOwner && previousOwner.customerId !== c.customerId && previousOwner.externalId !== phone) {
          return { ok: false, reason: 'conflict', ownerExternalId: previousOwner.externalId };
        }
        if (previousOwner && previousOwner.customerId !== c.customerId) {
          const { phone: _, ...rest } = previousOwner;
          await customers.save(rest as Customer, previousOwner);
        }
        const next = Object.assign({}, c, { phone });
        await customers.save(next, c);
        return { ok: true, customer: next };
      }),
    resolveWhatsApp: async (ids) => {
      // Nearly always the customer is known with exactly these ids: a read, no write transaction.
      const known =
        (ids.phone ? await store.customers.findBy('phone', ids.phone) : undefined) ??
        (ids.bsuid ? await store.customers.findBy('bsuid', ids.bsuid) : undefined);
      if (known && (!ids.phone || known.phone === ids.phone) && (!ids.bsuid || known.bsuid === ids.bsuid)) return known;
      return store.transaction(async ({ customers }) => {
        const externalId = (ids.phone ?? ids.bsuid)!;
        // One WhatsApp user at a time: two first messages of a new user must not create two customers.
        await customers.lockIdentity('ext', externalId);
        const byPhone = ids.phone ? await customers.findBy('phone', ids.phone) : undefined;
        const byBsuid = ids.bsuid ? await customers.findBy('bsuid', ids.bsuid) : undefined;
        const existing = byPhone ?? byBsuid ?? (await customers.findBy('ext', externalId));
        let c: Customer = existing ?? { customerId: `cus_${randomUUID()}`, externalId, createdAt: clock.now() };
        if (ids.phone && c.phone !== ids.phone) c = await setWhatsAppId(customers, c, 'phone', ids.phone);
        if (ids.bsuid && c.bsuid !== ids.bsuid) c = await setWhatsAppId(customers, c, 'bsuid', ids.bsuid);
        if (c !== existing) await customers.save(c, existing);
        return c;
      });
    },
    changeWhatsAppIdentity: (previous, next) =>
      store.transaction(async ({ customers }): Promise<IdentityChangeResult> => {
        const known = async (ids: WhatsAppIdentity) =>
          (ids.bsuid ? await customers.findBy('bsuid', ids.bsuid) : undefined) ?? (ids.phone ? await customers.findBy('phone', ids.phone) : undefined);
        const c = await known(previous);
        if (!c) {
          const already = await known(next);
          return already ? { changed: false, customer: already, reason: 'already_applied' } : { changed: false, reason: 'unknown_customer' };
        }
        let updated = c;
        if (next.phone && updated.phone !== next.phone) updated = await setWhatsAppId(customers, updated, 'phone', next.phone);
        if (next.bsuid && updated.bsuid !== next.bsuid) updated = await setWhatsAppId(customers, updated, 'bsuid', next.bsuid);
        if (updated === c) return { changed: false, customer: c, reason: 'already_applied' };
        await customers.save(updated, c);
        return { changed: true, customer: updated };
      }),
    setOptIn: async (externalId, optIn) => {
      const c = await store.customers.findBy('ext', externalId);
      if (!c) return undefined;
      return update(c.customerId, (cur) => Object.assign({}, cur, { optIn }));
    },
    touchInbound: async (customerId, channel, at, businessNumberId) => {
      await update(customerId, (cur) => {
        const previous = cur.lastInboundAt?.[channel] ?? 0;
        const next = Object.assign({}, cur, { lastInboundAt: Object.assign({}, cur.lastInboundAt, { [channel]: Math.max(at, previous) }) });
        // A redelivered older message does not move the customer back to the number they wrote to before.
        if (businessNumberId && at >= previous) next.businessNumberId = businessNumberId;
        return next;
      });
    },
    setLocale: async (customerId, locale) => {
      if ((await store.customers.get(customerId))?.locale === locale) return;
      await update(customerId, (cur) => (cur.locale === locale ? undefined : Object.assign({}, cur, { locale })));
    },
  };
}
