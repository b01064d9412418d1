// What we send on WhatsApp, whoever delivers it (Graph API, mock, or the SDK).
// `to` is the customer's address: a phone (E.164) or, for a user Meta names by
// BSUID only, the BSUID (`US.1349…`).
export type OutboundWhatsApp = (
  | { kind: 'text'; to: string; text: string }
  | { kind: 'template'; to: string; template: { name: string; language: string; parameters?: string[] } }
  | { kind: 'buttons'; to: string; text: string; buttons: { id: string; title: string }[] }
) & {
  /** Echoed back by Meta in status webhooks (`biz_opaque_callback_data`): how a send whose answer was lost is recognised. */
  callbackData?: string;
  /** The business number it goes out from (Meta's phone_number_id); unset: `channels.whatsapp.phone_id`. Graph API only. */
  fromNumberId?: string;
};

export type SendResult =
  | { ok: true; providerMessageId: string }
  | {
      ok: false;
      retryable: boolean;
      status?: number;
      code?: number | string;
      message: string;
      retryAfterMs?: number;
      /** The request went out but no answer came (timeout, reset): the provider may have accepted it. */
      uncertain?: boolean;
    };

export interface WhatsAppSender {
  readonly name: string;
  send(message: OutboundWhatsApp): Promise<SendResult>;
  /** False while the sender cannot take messages at all (no SDK connected): jobs wait without using attempts. */
  ready?(): boolean;
}

/** The message as plain text: what the SDK's onSend and the mock outbox see. */
export function renderText(m: OutboundWhatsApp): string {
  if (m.kind === 'text') return m.text;
  if (m.kind === 'template') return `[template:${m.template.name}]${m.template.parameters?.length ? ` ${m.template.parameters.join(' ')}` : ''}`;
  return `${m.text} [buttons: ${m.buttons.map((b) => b.title).join(' | ')}]`;
}

/** Exponential backoff with full jitter (base 500 ms, cap 30 s), never shorter than Retry-After. */
export function backoffDelay(attempt: number, retryAfterMs?: number, random: () => number = Math.random): number {
  const ceiling = Math.min(30_000, 500 * 2 ** Math.max(0, attempt));
  const jittered = Math.round(random() * ceiling);
  return Math.max(jittered, retryAfterMs ?? 0, 100);
}
