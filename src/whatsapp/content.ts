// What a customer's WhatsApp message says, as structured content: the shape
// kept in history (`data.content` of the customer record) and shown to the
// model as JSON, so a location, a flow reply or a photo reaches the LLM as
// data rather than a bare `[image]` tag. Built from Meta's message object;
// anything Parley cannot read becomes `unsupported` with Meta's type, so the
// customer still gets an answer.
import { z } from 'zod';

export type MediaType = 'image' | 'audio' | 'video' | 'document' | 'sticker';
export const MEDIA_TYPES: readonly MediaType[] = ['image', 'audio', 'video', 'document', 'sticker'];

export type WhatsAppContent =
  | { type: 'text'; text: string }
  /** A quick-reply button of a template message. */
  | { type: 'button'; text: string; payload?: string }
  | { type: 'button_reply'; id: string; title: string }
  | { type: 'list_reply'; id: string; title: string; description?: string }
  /** An `nfm_reply`: a WhatsApp Flow (or address message) the customer completed; `response` is its parsed `response_json`. */
  | { type: 'flow_reply'; name?: string; body?: string; response: unknown }
  | {
      type: 'media';
      mediaType: MediaType;
      /** Meta's media id: what `downloadMedia` (SDK) takes. */
      mediaId?: string;
      mimeType?: string;
      caption?: string;
      fileName?: string;
      sha256?: string;
      /** An audio recorded in WhatsApp (a voice note), not a shared audio file. */
      voice?: boolean;
      animated?: boolean;
    }
  | { type: 'location'; latitude: number; longitude: number; name?: string; address?: string; url?: string }
  | { type: 'contacts'; contacts: SharedContact[] }
  | { type: 'order'; catalogId?: string; text?: string; items: { productRetailerId: string; quantity: number; itemPrice?: number; currency?: string }[] }
  /** A reaction (with its emoji) to one of the conversation's messages, by WhatsApp message id. */
  | { type: 'reaction'; emoji: string; messageId?: string }
  /** The customer opened the chat for the first time (Meta's `request_welcome`). */
  | { type: 'welcome_request' }
  | { type: 'unsupported'; messageType: string; detail?: string };

export interface SharedContact {
  name?: string;
  phones?: { phone?: string; waId?: string; type?: string }[];
  emails?: { email?: string; type?: string }[];
  org?: { company?: string; department?: string; title?: string };
  addresses?: Record<string, string>[];
  urls?: { url?: string; type?: string }[];
  birthday?: string;
}

const str = z.string();
const optStr = z.string().optional();
/** Meta sends some numbers as strings in places (quantities, prices): accept both. */
const num = z.union([
  z.number(),
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/)
    .transform(Number),
]);

const Media = z.looseObject({
  id: optStr,
  mime_type: optStr,
  caption: optStr,
  filename: optStr,
  sha256: optStr,
  voice: z.boolean().optional(),
  animated: z.boolean().optional(),
});
const Location = z.looseObject({ latitude: num, longitude: num, name: optStr, address: optStr, url: optStr });
const Interactive = z.looseObject({
  type: str,
  button_reply: z.looseObject({ id: str, title: str }).optional(),
  list_reply: z.looseObject({ id: str, title: str, description: optStr }).optional(),
  nfm_reply: z.looseObject({ name: optStr, body: optStr, response_json: z.string() }).optional(),
});
const Text = z.looseObject({ body: str });
const Button = z.looseObject({ text: str, payload: optStr });
const Reaction = z.looseObject({ message_id: optStr, emoji: optStr });
const Order = z.looseObject({
  catalog_id: optStr,
  text: optStr,
  product_items: z.array(z.looseObject({ product_retailer_id: str, quantity: num, item_price: num.optional(), currency: optStr })).default([]),
});
const Contact = z.looseObject({
  name: z.looseObject({ formatted_name: optStr, first_name: optStr, last_name: optStr }).optional(),
  phones: z.array(z.looseObject({ phone: optStr, wa_id: optStr, type: optStr })).optional(),
  emails: z.array(z.looseObject({ email: optStr, type: optStr })).optional(),
  org: z.looseObject({ company: optStr, department: optStr, title: optStr }).optional(),
  addresses: z.array(z.record(z.string(), z.unknown())).optional(),
  urls: z.array(z.looseObject({ url: optStr, type: optStr })).optional(),
  birthday: optStr,
});

/** Drops undefined values (the JSON the model reads and history stores stays small and stable). */
function compact<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

const parseJson = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
};

const stringsOnly = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));

const Contacts = z.array(Contact);
const Unsupported = z.looseObject({ type: optStr });
const MessageErrors = z.array(z.looseObject({ title: optStr, message: optStr }));

function sharedContact(c: z.infer<typeof Contact>): SharedContact {
  const name = c.name?.formatted_name || [c.name?.first_name, c.name?.last_name].filter(Boolean).join(' ') || undefined;
  return compact({
    name,
    phones: c.phones?.map((p) => compact({ phone: p.phone, waId: p.wa_id, type: p.type })),
    emails: c.emails?.map((e) => compact({ email: e.email, type: e.type })),
    org: c.org ? compact({ company: c.org.company, department: c.org.department, title: c.org.title }) : undefined,
    addresses: c.addresses?.map(stringsOnly),
    urls: c.urls?.map((u) => compact({ url: u.url, type: u.type })),
    birthday: c.birthday,
  });
}

/** A photo, voice note, audio file, video, document or sticker: its media id and what Meta says of it. */
function mediaContent(type: MediaType, raw: unknown): WhatsAppContent | undefined {
  const media = Media.safeParse(raw ?? {});
  if (!media.success) return undefined;
  const d = media.data;
  return compact({
    type: 'media' as const,
    mediaType: type,
    mediaId: d.id,
    mimeType: d.mime_type,
    caption: d.caption,
    fileName: d.filename,
    sha256: d.sha256,
    voice: type === 'audio' ? d.voice === true : undefined,
    animated: type === 'sticker' ? d.animated : undefined,
  });
}

/** An order from the catalogue: its items with their quantities and prices. */
function orderContent(raw: unknown): WhatsAppContent | undefined {
  const o = Order.safeParse(raw);
  if (!o.success) return undefined;
  return compact({
    type: 'order' as const,
    catalogId: o.data.catalog_id,
    text: o.data.text || undefined,
    items: o.data.product_items.map((p) =>
      compact({ productRetailerId: p.product_retailer_id, quantity: p.quantity, itemPrice: p.item_price, currency: p.currency }),
    ),
  });
}

/** The content of one message object of Meta's webhook (`messages[]`, or `edit.message`). */
export function contentOf(m: Record<string, unknown>): WhatsAppContent {
  const type = typeof m.type === 'string' ? m.type : 'unknown';
  const unsupported = (detail?: string): WhatsAppContent => compact({ type: 'unsupported' as const, messageType: type, detail });
  switch (type) {
    case 'text': {
      const t = Text.safeParse(m.text);
      return t.success ? { type: 'text', text: t.data.body } : unsupported();
    }
    case 'button': {
      const b = Button.safeParse(m.button);
      return b.success ? compact({ type: 'button' as const, text: b.data.text, payload: b.data.payload }) : unsupported();
    }
    case 'interactive': {
      const i = Interactive.safeParse(m.interactive);
      if (!i.success) return unsupported();
      const { button_reply: br, list_reply: lr, nfm_reply: nfm } = i.data;
      if (br) return { type: 'button_reply', id: br.id, title: br.title };
      if (lr) return compact({ type: 'list_reply' as const, id: lr.id, title: lr.title, description: lr.description });
      if (nfm) return compact({ type: 'flow_reply' as const, name: nfm.name, body: nfm.body, response: parseJson(nfm.response_json) });
      return unsupported(`interactive ${i.data.type}`);
    }
    case 'image':
    case 'audio':
    case 'video':
    case 'document':
    case 'sticker':
      return mediaContent(type, m[type]) ?? unsupported();
    case 'location': {
      const l = Location.safeParse(m.location);
      if (!l.success) return unsupported();
      return compact({
        type: 'location' as const,
        latitude: l.data.latitude,
        longitude: l.data.longitude,
        name: l.data.name,
        address: l.data.address,
        url: l.data.url,
      });
    }
    case 'contacts': {
      const list = Contacts.safeParse(m.contacts);
      return list.success ? { type: 'contacts', contacts: list.data.map(sharedContact) } : unsupported();
    }
    case 'order':
      return orderContent(m.order) ?? unsupported();
    case 'reaction': {
      const r = Reaction.safeParse(m.reaction);
      return r.success && r.data.emoji ? compact({ type: 'reaction' as const, emoji: r.data.emoji, messageId: r.data.message_id }) : unsupported();
    }
    case 'request_welcome':
      return { type: 'welcome_request' };
    case 'unsupported': {
      const u = Unsupported.safeParse(m.unsupported);
      const errors = MessageErrors.safeParse(m.errors);
      const detail = errors.success ? (errors.data[0]?.message ?? errors.data[0]?.title) : undefined;
      return compact({ type: 'unsupported' as const, messageType: u.success && u.data.type ? u.data.type : 'unsupported', detail });
    }
    default:
      return unsupported();
  }
}

const LABEL: Record<string, string> = {
  button: 'button',
  flow_reply: 'flow reply',
  location: 'location',
  contacts: 'shared contacts',
  order: 'order',
  reaction: 'reaction',
  welcome_request: 'chat opened',
  unsupported: 'message Parley cannot read',
};

/**
 * What the model reads for this content. Typed text, button and list titles stay the customer's words;
 * anything else is a one-line label followed by the content as JSON (a voice note says so in its label).
 */
export function textForModel(c: WhatsAppContent): string {
  if (c.type === 'text') return c.text;
  if (c.type === 'button') return c.text;
  if (c.type === 'button_reply' || c.type === 'list_reply') return c.title;
  const label = c.type === 'media' ? (c.voice ? 'voice note' : c.mediaType) : (LABEL[c.type] ?? c.type);
  return `[WhatsApp ${label}] ${JSON.stringify(c)}`;
}

/** The coarse kind kept on the inbound job and in telemetry. */
export function kindOf(c: WhatsAppContent): 'text' | 'button' | 'list' | 'media' | 'other' {
  if (c.type === 'text') return 'text';
  if (c.type === 'button' || c.type === 'button_reply') return 'button';
  if (c.type === 'list_reply') return 'list';
  if (c.type === 'media') return 'media';
  return 'other';
}
