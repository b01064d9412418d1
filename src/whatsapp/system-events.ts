// Meta's `system` messages: not something the customer wrote, but a change of
// who they are. `user_changed_number` (formerly `customer_changed_number`)
// carries the new phone in `system.wa_id` (older: `new_wa_id`) and, since
// BSUIDs, the new BSUID in `system.user_id` (a number change makes a new
// BSUID). `user_changed_user_id` carries only the new BSUID; the old one is
// the sender's `from_user_id`, and is also named in the body ("User X changed
// from <old> to <new>"). `customer_identity_changed` / `user_identity_changed`
// say the user's security key changed: same person, same ids.
import { z } from 'zod';
import { normalizePhone } from './phone.ts';
import { asBsuid } from './user-id.ts';

export interface WhatsAppIds {
  phone?: string;
  bsuid?: string;
}

export type SystemEvent =
  /** The user's phone and/or BSUID changed: link `to` to the customer known by `from`. */
  | { kind: 'identity'; systemType: string; from: WhatsAppIds; to: WhatsAppIds }
  /** Nothing to update (a security-key change, or a system type Parley does not know): recorded only. */
  | { kind: 'notice'; systemType: string; body?: string };

const System = z.looseObject({
  type: z.string().optional(),
  body: z.string().optional(),
  wa_id: z.string().optional(),
  new_wa_id: z.union([z.string(), z.number()]).optional(),
  customer: z.string().optional(),
  user_id: z.string().optional(),
  previous_user_id: z.string().optional(),
});

const CHANGED = /changed from (\S+) to (\S+?)\.?$/;

const idsOf = (raw: string | undefined): WhatsAppIds => {
  if (!raw) return {};
  const phone = normalizePhone(raw);
  if (phone) return { phone };
  const bsuid = asBsuid(raw);
  return bsuid ? { bsuid } : {};
};

const some = (ids: WhatsAppIds) => Boolean(ids.phone || ids.bsuid);
const clean = (ids: WhatsAppIds): WhatsAppIds => Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined));

/** `sender` is who Meta says the message is from (its `from` / `from_user_id`). */
export function systemEventOf(raw: unknown, sender: WhatsAppIds): SystemEvent {
  const parsed = System.safeParse(raw);
  if (!parsed.success) return { kind: 'notice', systemType: 'unknown' };
  const s = parsed.data;
  const systemType = s.type ?? 'unknown';
  const inBody = s.body ? CHANGED.exec(s.body.trim()) : null;
  const bodyFrom = idsOf(inBody?.[1]);
  const bodyTo = idsOf(inBody?.[2]);

  if (systemType === 'user_changed_number' || systemType === 'customer_changed_number') {
    const from = clean({ phone: sender.phone ?? normalizePhone(s.customer ?? '') ?? bodyFrom.phone, bsuid: sender.bsuid });
    const newPhone = normalizePhone(s.wa_id ?? String(s.new_wa_id ?? '')) ?? bodyTo.phone ?? undefined;
    const to = clean({ phone: newPhone, bsuid: asBsuid(s.user_id) });
    if (some(from) && some(to)) return { kind: 'identity', systemType, from, to };
    return { kind: 'notice', systemType, body: s.body };
  }
  if (systemType === 'user_changed_user_id') {
    const newBsuid = asBsuid(s.user_id) ?? bodyTo.bsuid;
    // Whether `from_user_id` names the old or the new BSUID is not documented: the body and
    // `previous_user_id` (seen in captures) say which is old; the sender's counts only if it is not the new one.
    const oldBsuid = asBsuid(s.previous_user_id) ?? bodyFrom.bsuid ?? (sender.bsuid !== newBsuid ? sender.bsuid : undefined);
    const from = clean({ phone: sender.phone, bsuid: oldBsuid });
    const to = clean({ bsuid: newBsuid, phone: normalizePhone(s.wa_id ?? '') ?? undefined });
    // The new BSUID is the point; a phone that did not change is no "to".
    if (to.phone && to.phone === from.phone) delete to.phone;
    if (some(from) && to.bsuid && to.bsuid !== from.bsuid) return { kind: 'identity', systemType, from, to };
    return { kind: 'notice', systemType, body: s.body };
  }
  return { kind: 'notice', systemType, body: s.body };
}
