// Meta's webhook body (WhatsApp Cloud API), read part by part. Only the
// envelope `{object, entry: []}` must hold; each entry, change, message and
// status is parsed on its own, so one part Parley cannot use never rejects the
// others: it is returned in `ignored` (with its type and why) for the caller
// to log and count. Fields Meta adds are ignored.
//
// A message becomes one of: a customer message (a turn), an identity event
// (a `system` message that changes the customer's phone or BSUID: queued, no
// reply), or a quiet event (a removed reaction, an edit, a deletion, a system
// notice: recorded, no turn).
import { z } from 'zod';
import { textFaultAt } from '../http/json-body.ts';
import { contentOf, kindOf, textForModel, type WhatsAppContent } from './content.ts';
import { normalizePhone } from './phone.ts';
import { systemEventOf, type WhatsAppIds } from './system-events.ts';
import { asBsuid } from './user-id.ts';

interface InboundBase {
  waMessageId: string;
  /** The ordering key of the inbound queue: the sender's BSUID when Meta gave one, else the phone (E.164). */
  from: string;
  phoneNumberId: string;
  timestampMs: number;
}

export interface InboundMessage extends InboundBase {
  kind: 'text' | 'button' | 'list' | 'media' | 'other';
  /** What the model reads (see `textForModel`). */
  text: string;
  content?: WhatsAppContent;
  /** E.164; absent for a user Meta identifies by BSUID only. */
  phone?: string;
  bsuid?: string;
  name?: string;
  username?: string;
  replyId?: string;
}

export interface InboundIdentityEvent extends InboundBase {
  kind: 'identity';
  systemType: string;
  previous: WhatsAppIds;
  next: WhatsAppIds;
}

/** What the inbound queue carries. Jobs stored before BSUIDs have `from` (a phone) and no `phone`/`bsuid`. */
export type InboundWhatsApp = InboundMessage | InboundIdentityEvent;

/** A message that starts no turn and needs no durable work. */
export interface QuietEvent {
  type: 'reaction_removed' | 'edit' | 'revoke' | 'system';
  waMessageId: string;
  phoneNumberId: string;
  /** The message a removed reaction, an edit or a deletion refers to. */
  originalId?: string;
  systemType?: string;
  /** For an edit: the new content. */
  content?: WhatsAppContent;
}

export interface WhatsAppStatus {
  providerMessageId: string;
  status: string;
  /** The phone (`recipient_id`) or, for a send to a BSUID, `recipient_user_id`. */
  recipient?: string;
  timestampMs: number;
  errors: { code: number | string; title?: string; message?: string }[];
  callbackData?: string;
  /** Meta's `pricing` of the message, when the status carries one (src/whatsapp/delivery-status.ts prices it). */
  pricing?: StatusPricing;
  /** `metadata.phone_number_id` of the change it came in. */
  phoneNumberId: string;
}

export interface StatusPricing {
  /** `marketing`, `utility`, `authentication`, `service`, … (Meta's words, kept as they come). */
  category: string;
  billable: boolean;
  /** `PMP` (per message) or `CBP` (per conversation, before July 2025). */
  model?: string;
}

/** A part of the body Parley cannot use; logged once per body and counted. */
export interface IgnoredPart {
  part: 'entry' | 'change' | 'message' | 'status' | 'contact' | 'errors';
  /** The message type, the change's `field`, or what was wrong. */
  type: string;
  reason: string;
  id?: string;
}

export interface ParsedWebhook {
  messages: InboundMessage[];
  events: InboundIdentityEvent[];
  quiet: QuietEvent[];
  statuses: WhatsAppStatus[];
  ignored: IgnoredPart[];
  /** Message objects in the body, used or not. */
  received: number;
}

export class WebhookPayloadError extends Error {
  override name = 'WebhookPayloadError';
}

const Envelope = z.object({ object: z.string(), entry: z.array(z.unknown()) });
const Entry = z.looseObject({ changes: z.array(z.unknown()) });
const Change = z.looseObject({ field: z.string().optional(), value: z.looseObject({}) });
const Value = z.looseObject({
  metadata: z.looseObject({ phone_number_id: z.string() }).optional(),
  contacts: z.array(z.unknown()).optional(),
  messages: z.array(z.unknown()).optional(),
  statuses: z.array(z.unknown()).optional(),
  errors: z.array(z.unknown()).optional(),
});
const ContactSchema = z.looseObject({
  wa_id: z.string().optional(),
  user_id: z.string().optional(),
  profile: z.looseObject({ name: z.string().optional(), username: z.string().optional() }).optional(),
});
const Timestamp = z.union([z.string(), z.number()]).optional();
/**
 * A message or status id Parley keys by (de-duplication, receipts). Meta's are about 60 characters; a longer one
 * overflowed LMDB's key limit (1,978 bytes), a NUL failed PostgreSQL's text: such a part is ignored, not a 500 that
 * Meta would send again for days.
 */
const WaId = z
  .string()
  .min(1)
  .max(512)
  .refine((id) => !id.includes('\u0000'), 'holds NUL');
const MessageHead = z.looseObject({
  id: WaId,
  type: z.string().min(1),
  from: z.string().optional(),
  from_user_id: z.string().optional(),
  timestamp: Timestamp,
  context: z.looseObject({ id: z.string().optional() }).optional(),
});
const Status = z.looseObject({
  id: WaId,
  status: z.string().min(1),
  recipient_id: z.string().optional(),
  recipient_user_id: z.string().optional(),
  timestamp: Timestamp,
  biz_opaque_callback_data: z.string().optional(),
  // A pricing object Parley cannot read is left out; the status itself still counts.
  pricing: z
    .looseObject({ category: z.string().min(1).max(64), billable: z.boolean().optional(), pricing_model: z.string().max(32).optional() })
    .optional()
    .catch(undefined),
  // Kept whole: Meta's error_data.details goes to telemetry with the code.
  errors: z.array(z.looseObject({ code: z.union([z.number(), z.string()]), title: z.string().optional(), message: z.string().optional() })).optional(),
});

const UNSTORABLE = 'text that cannot be stored (a NUL or a lone surrogate)';

/** Changes whose `messages`/`statuses` are not customer messages (calls have their own statuses). */
const OTHER_FIELDS = new Set(['calls', 'smb_message_echoes', 'history', 'smb_app_state_sync']);
/** `unsupported` messages that stand for an action on another message, not something to answer. */
const QUIET_UNSUPPORTED = new Set(['edit', 'revoke']);

const toMs = (t: string | number | undefined) => {
  const n = Number(t);
  return Number.isFinite(n) && n > 0 ? n * 1000 : 0;
};
const typeOf = (raw: unknown) => {
  const t = (raw as { type?: unknown } | null)?.type;
  return typeof t === 'string' && t.length <= 64 ? t : 'unknown';
};
const idOf = (raw: unknown) => {
  const id = (raw as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id.slice(0, 200) : undefined;
};

type Contact = z.infer<typeof ContactSchema>;

/** Who sent it: `from`/`from_user_id`, completed from the matching `contacts[]` entry (or the only one). */
function senderOf(m: z.infer<typeof MessageHead>, contacts: Contact[]): { ids: WhatsAppIds; contact?: Contact } {
  const contact =
    contacts.find((c) => (c.wa_id !== undefined && c.wa_id === m.from) || (c.user_id !== undefined && c.user_id === m.from_user_id)) ??
    (contacts.length === 1 ? contacts[0] : undefined);
  const phone = normalizePhone(m.from ?? '') ?? normalizePhone(contact?.wa_id ?? '') ?? undefined;
  // A BSP may put the BSUID in `from` itself for a username-only user.
  const bsuid = asBsuid(m.from_user_id) ?? asBsuid(contact?.user_id) ?? (m.from && !phone ? asBsuid(m.from) : undefined);
  const ids: WhatsAppIds = {};
  if (phone) ids.phone = phone;
  if (bsuid) ids.bsuid = bsuid;
  return { ids, contact };
}

export function parseWebhook(json: unknown): ParsedWebhook {
  const envelope = Envelope.safeParse(json);
  if (!envelope.success) {
    throw new WebhookPayloadError(
      envelope.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || 'body'}: ${i.message}`)
        .join('; '),
    );
  }
  const out: ParsedWebhook = { messages: [], events: [], quiet: [], statuses: [], ignored: [], received: 0 };
  const ignore = (part: IgnoredPart['part'], type: string, reason: string, id?: string) =>
    out.ignored.push(id ? { part, type, reason, id } : { part, type, reason });
  if (envelope.data.object !== 'whatsapp_business_account') {
    ignore('entry', envelope.data.object.slice(0, 64), 'not a WhatsApp Business Account webhook');
    return out;
  }
  for (const rawEntry of envelope.data.entry) {
    const entry = Entry.safeParse(rawEntry);
    if (!entry.success) {
      ignore('entry', 'entry', 'no changes array');
      continue;
    }
    for (const rawChange of entry.data.changes) {
      const change = Change.safeParse(rawChange);
      const value = change.success ? Value.safeParse(change.data.value) : undefined;
      if (!change.success || !value?.success) {
        ignore('change', typeOf(rawChange), 'no value object');
        continue;
      }
      const field = change.data.field ?? 'messages';
      const v = value.data;
      if (OTHER_FIELDS.has(field) || (!v.messages && !v.statuses)) {
        if (!v.errors) ignore('change', field.slice(0, 64), 'not a messages change');
      } else parseMessagesChange(v, out, ignore);
      if (v.errors?.length) ignore('errors', field.slice(0, 64), `webhook errors: ${JSON.stringify(v.errors).slice(0, 300)}`);
    }
  }
  return out;
}

function parseMessagesChange(
  v: z.infer<typeof Value>,
  out: ParsedWebhook,
  ignore: (part: IgnoredPart['part'], type: string, reason: string, id?: string) => void,
) {
  const phoneNumberId = v.metadata?.phone_number_id ?? '';
  // Text no store keeps as sent (a NUL, which PostgreSQL refuses; a lone surrogate) in the change's metadata or in a
  // part: that part is ignored. Queued, it failed its job again and again, holding up the sender's later messages.
  const inMetadata = textFaultAt(v.metadata) !== undefined;
  const unstorable = (raw: unknown) => inMetadata || textFaultAt(raw) !== undefined;
  const contacts: Contact[] = [];
  for (const c of v.contacts ?? []) {
    const parsed = ContactSchema.safeParse(c);
    if (parsed.success && !unstorable(c)) contacts.push(parsed.data);
    else ignore('contact', 'contact', 'malformed contact');
  }
  for (const raw of v.messages ?? []) {
    out.received++;
    if (unstorable(raw)) {
      ignore('message', typeOf(raw), UNSTORABLE, idOf(raw));
      continue;
    }
    const head = MessageHead.safeParse(raw);
    if (!head.success) {
      ignore('message', typeOf(raw), 'no message id or type', idOf(raw));
      continue;
    }
    const m = head.data;
    const { ids, contact } = senderOf(m, contacts);
    const base = { waMessageId: m.id, phoneNumberId, timestampMs: toMs(m.timestamp) };
    const record = raw as Record<string, unknown>;

    if (m.type === 'system') {
      const e = systemEventOf(record.system, ids);
      if (e.kind === 'identity') {
        const key = e.from.bsuid ?? e.from.phone ?? e.to.bsuid ?? e.to.phone!;
        out.events.push({ kind: 'identity', systemType: e.systemType, previous: e.from, next: e.to, from: key, ...base });
      } else out.quiet.push({ type: 'system', systemType: e.systemType, waMessageId: m.id, phoneNumberId });
      continue;
    }
    const quiet = quietOf(m.type, record);
    if (quiet) {
      out.quiet.push(Object.assign(quiet, { waMessageId: m.id, phoneNumberId }));
      continue;
    }
    const from = ids.bsuid ?? ids.phone;
    if (!from) {
      ignore('message', m.type, 'no sender (neither a phone number nor a BSUID)', m.id);
      continue;
    }
    const content = contentOf(record);
    const replyId = content.type === 'button_reply' || content.type === 'list_reply' ? content.id : content.type === 'button' ? content.payload : undefined;
    const message: InboundMessage = { kind: kindOf(content), text: textForModel(content), content, from, ...base };
    if (ids.phone) message.phone = ids.phone;
    if (ids.bsuid) message.bsuid = ids.bsuid;
    if (contact?.profile?.name) message.name = contact.profile.name;
    if (contact?.profile?.username) message.username = contact.profile.username;
    if (replyId !== undefined) message.replyId = replyId;
    out.messages.push(message);
  }
  for (const raw of v.statuses ?? []) {
    if (unstorable(raw)) {
      ignore('status', 'unknown', UNSTORABLE, idOf(raw));
      continue;
    }
    const status = statusOf(raw, phoneNumberId, ignore);
    if (status) out.statuses.push(status);
  }
}

/** One delivery status of a messages change, or undefined (and the part ignored) when it names no message or status. */
function statusOf(
  raw: unknown,
  phoneNumberId: string,
  ignore: (part: IgnoredPart['part'], type: string, reason: string, id?: string) => void,
): WhatsAppStatus | undefined {
  const parsed = Status.safeParse(raw);
  if (!parsed.success) {
    ignore(
      'status',
      typeof (raw as { status?: unknown } | null)?.status === 'string' ? String((raw as { status: string }).status).slice(0, 64) : 'unknown',
      'no message id or status',
      idOf(raw),
    );
    return undefined;
  }
  const s = parsed.data;
  const status: WhatsAppStatus = {
    providerMessageId: s.id,
    status: s.status,
    recipient: s.recipient_id ?? s.recipient_user_id,
    timestampMs: toMs(s.timestamp),
    errors: s.errors ?? [],
    phoneNumberId,
  };
  if (s.biz_opaque_callback_data) status.callbackData = s.biz_opaque_callback_data;
  if (s.pricing)
    status.pricing = Object.assign(
      { category: s.pricing.category, billable: s.pricing.billable !== false },
      s.pricing.pricing_model ? { model: s.pricing.pricing_model } : {},
    );
  return status;
}

/** A removed reaction, an edit or a deletion: no turn. */
function quietOf(type: string, m: Record<string, unknown>): Omit<QuietEvent, 'waMessageId' | 'phoneNumberId'> | undefined {
  const original = (o: unknown, key: string) => {
    const v = (o as Record<string, unknown> | null | undefined)?.[key];
    return typeof v === 'string' ? v : undefined;
  };
  if (type === 'reaction') {
    const emoji = original(m.reaction, 'emoji');
    if (!emoji) return { type: 'reaction_removed', originalId: original(m.reaction, 'message_id') };
    return undefined;
  }
  if (type === 'edit') {
    const edited = (m.edit as Record<string, unknown> | undefined)?.message;
    return {
      type: 'edit',
      originalId: original(m.edit, 'original_message_id'),
      ...(edited && typeof edited === 'object' ? { content: contentOf(edited as Record<string, unknown>) } : {}),
    };
  }
  if (type === 'revoke') return { type: 'revoke', originalId: original(m.revoke, 'original_message_id') };
  if (type === 'unsupported') {
    const inner = original(m.unsupported, 'type');
    if (inner && QUIET_UNSUPPORTED.has(inner)) return { type: inner as 'edit' | 'revoke' };
  }
  return undefined;
}
