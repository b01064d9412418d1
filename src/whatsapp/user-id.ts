// WhatsApp user identifiers. Meta names a user by phone number (`wa_id`, digits)
// and, since April 2026, by a business-scoped user id (BSUID, `user_id`): a
// two-letter country code, a dot, then up to 128 alphanumerics, e.g.
// `US.13491208655302741918` (`US.ENT.…` for a parent BSUID). A user with a
// username may come with the BSUID alone. Parley keeps a phone as E.164
// (`+15550003333`) and a BSUID exactly as Meta sent it.
import { normalizePhone } from './phone.ts';

/**
 * A BSUID as Meta sends it. Deliberately lenient (any short token without spaces that is not a phone
 * number): the format is new and documented as "subject to change", and refusing an unexpected id would
 * drop the customer's message; it is only ever stored and echoed back to Meta.
 */
export function asBsuid(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  // No whitespace or control characters, and no `<PLACEHOLDER>` from a docs sample.
  if (!v || v.length > 256 || /[\s<>]/.test(v) || [...v].some((c) => c.charCodeAt(0) < 0x20)) return undefined;
  return v;
}

/** True for a BSUID-shaped address (`CC.` then the id), false for a phone number. */
export const isBsuidAddress = (address: string) => /^[A-Za-z]{2}\./.test(address);

/** The address a reply goes to: the phone when known (Meta prefers it when both are given), else the BSUID. */
export function whatsappAddress(c: { phone?: string; bsuid?: string }): string | undefined {
  return c.phone ?? c.bsuid;
}

/** A phone or a BSUID typed by an integrator (SDK `ingest`): E.164 or the BSUID as is; null when neither. */
export function parseWhatsAppUser(input: string): { phone: string } | { bsuid: string } | null {
  const phone = normalizePhone(input);
  if (phone) return { phone };
  const bsuid = asBsuid(input);
  return bsuid && isBsuidAddress(bsuid) ? { bsuid } : null;
}
