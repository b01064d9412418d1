// Anonymous widget visitors (`identity.allow_anonymous`, development only) claim an id and an email
// that nobody verified, so they live in their own namespace: the visitor who claims id X is the
// customer with externalId `anon:X` (customerId X). The integrator's own ids (magic links, proactive
// sends, tool calls' `context.externalId`) never meet it: a visitor who claims a real customer's
// externalId gets a separate, empty record, and a magic link for that externalId later creates the
// real customer beside it instead of handing the visitor's record over. `anon:` is reserved: a magic
// link may not be asked for an externalId that starts with it.
import { ANONYMOUS_PREFIX } from '../store/model.ts';
import type { Customer, CustomerRepo } from './repo.ts';

export { ANONYMOUS_PREFIX } from '../store/model.ts';

export const anonymousExternalId = (claimedId: string) => `${ANONYMOUS_PREFIX}${claimedId}`;
export const isAnonymousExternalId = (externalId: string) => externalId.startsWith(ANONYMOUS_PREFIX);

export type AnonymousResult = { ok: true; customer: Customer } | { ok: false; reason: string };

/**
 * The visitor's record: resumed only with the email it was created with (any case), created on first use.
 * An id that already names a customer outside the namespace (a signed-in or WhatsApp customer) is refused.
 */
export async function resumeAnonymous(customers: CustomerRepo, claimed: { customerId: string; email: string }): Promise<AnonymousResult> {
  const externalId = anonymousExternalId(claimed.customerId);
  let customer = await customers.findBy('ext', externalId);
  if (!customer) {
    const taken = await customers.get(claimed.customerId);
    if (taken && !isAnonymousExternalId(taken.externalId)) return { ok: false, reason: 'This customer can only be resumed with a session token' };
    customer = await customers.upsert({ externalId, customerId: claimed.customerId, email: claimed.email });
  }
  // Also settles two first inits racing for one new id: only the one whose email was stored gets in.
  if (customer.email?.toLowerCase() !== claimed.email.toLowerCase()) return { ok: false, reason: 'This anonymous id is in use with another email' };
  return { ok: true, customer };
}
