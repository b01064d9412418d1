// Builds signed Meta webhook payloads for tests.
import { signPayload } from '../../src/whatsapp/signature.ts';

export const WA = { phone_id: '1234567890', token: 'wa-token-xyz', verify_token: 'verify-me', app_secret: 'app-secret-abc' };

let counter = 0;

export function textMessage(from: string, text: string, id = `wamid.in.${++counter}.${Date.now()}`) {
  return { from: from.replace('+', ''), id, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: text } };
}

export function buttonReply(from: string, replyId: string, title: string) {
  return {
    from: from.replace('+', ''),
    id: `wamid.btn.${++counter}`,
    timestamp: String(Math.floor(Date.now() / 1000)),
    type: 'interactive',
    interactive: { type: 'button_reply', button_reply: { id: replyId, title } },
  };
}

export function webhookBody(messages: unknown[], statuses: unknown[] = []) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550001111', phone_number_id: WA.phone_id },
              contacts: (messages as { from: string }[]).map((m) => ({ wa_id: m.from, profile: { name: 'Test' } })),
              ...(messages.length ? { messages } : {}),
              ...(statuses.length ? { statuses } : {}),
            },
          },
        ],
      },
    ],
  };
}

export async function postWebhook(baseUrl: string, body: unknown, o: { secret?: string; signature?: string | null; path?: string } = {}) {
  const raw = JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const sig = o.signature === undefined ? signPayload(raw, o.secret ?? WA.app_secret) : o.signature;
  if (sig !== null) headers['x-hub-signature-256'] = sig;
  return fetch(`${baseUrl}${o.path ?? '/wa/webhook'}`, { method: 'POST', headers, body: raw });
}

/** Polls `fn` until `ok` (or throws with the last value after `timeoutMs`: generous, the machine may be busy). */
export async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last value: ${JSON.stringify(v).slice(0, 1500)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A text message whose Meta timestamp is `atMs`. */
export function textMessageAt(from: string, text: string, atMs: number, id = `wamid.in.${++counter}.${Date.now()}`) {
  return { ...textMessage(from, text, id), timestamp: String(Math.floor(atMs / 1000)) };
}

/** A webhook body for another business phone number. */
export function webhookBodyFor(phoneNumberId: string, messages: unknown[], statuses: unknown[] = []) {
  const body = webhookBody(messages, statuses);
  body.entry[0].changes[0].value.metadata.phone_number_id = phoneNumberId;
  return body;
}

/**
 * Resolves when the WhatsApp outbound queue has nothing stored or running (test mode's /diagnostics). Call it before
 * jumping the test clock: a send still being recorded when the clock jumps a day outlives its lease on that clock and
 * rightly runs again.
 */
export async function outboundSettled(baseUrl: string): Promise<void> {
  const outbound = async () =>
    ((await (await fetch(`${baseUrl}/diagnostics`)).json()) as { whatsapp: { outbound: { depth: number; inFlight: number } } }).whatsapp.outbound;
  await until(outbound, (o) => o.depth === 0 && o.inFlight === 0);
}
