// The built-in `meta` adapter: one POST to the Graph API per attempt; the
// outbound queue owns the retry policy. The token never reaches a log.
import { request } from 'undici';
import { storableJson, storableText } from '../http/storable-text.ts';
import { toWaId } from './phone.ts';
import { isBsuidAddress } from './user-id.ts';
import type { OutboundWhatsApp, SendResult, WhatsAppSender } from './outbound.ts';

export interface GraphClientOptions {
  graphUrl: string;
  /** The business number a message without `fromNumberId` goes out from. */
  phoneId: string;
  token: string;
  timeoutMs: number;
}

export function graphBody(m: OutboundWhatsApp): Record<string, unknown> {
  const base = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    // Meta's send API: a phone goes in `to`, a business-scoped user id in `recipient` (with no `to`).
    ...(isBsuidAddress(m.to) ? { recipient: m.to } : { to: toWaId(m.to) }),
    ...(m.callbackData ? { biz_opaque_callback_data: m.callbackData.slice(0, 512) } : {}),
  };
  if (m.kind === 'text') return { type: 'text', text: { preview_url: false, body: m.text }, ...base };
  if (m.kind === 'template') {
    return {
      type: 'template',
      template: {
        name: m.template.name,
        language: { code: m.template.language },
        ...(m.template.parameters?.length ? { components: [{ type: 'body', parameters: m.template.parameters.map((text) => ({ type: 'text', text })) }] } : {}),
      },
      ...base,
    };
  }
  return {
    type: 'interactive',
    interactive: {
      type: 'button',
      body: { text: m.text.slice(0, 1024) },
      action: { buttons: m.buttons.slice(0, 3).map((b) => ({ type: 'reply', reply: { id: b.id.slice(0, 256), title: b.title.slice(0, 20) } })) },
    },
    ...base,
  };
}

/** Retry-After: seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Errors raised before the request could reach Meta: certainly not sent. Anything else may have been accepted. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_INVALID_URL',
  'UND_ERR_INVALID_ARG',
]);

export function createGraphClient(o: GraphClientOptions): WhatsAppSender {
  const base = o.graphUrl.replace(/\/$/, '');
  return {
    name: 'meta',
    async send(message): Promise<SendResult> {
      const url = `${base}/${encodeURIComponent(message.fromNumberId || o.phoneId)}/messages`;
      let res;
      try {
        res = await request(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(graphBody(message)),
          headersTimeout: o.timeoutMs,
          bodyTimeout: o.timeoutMs,
        });
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'network_error';
        const uncertain = !NOT_SENT.has(code);
        return {
          ok: false,
          retryable: true,
          uncertain,
          code,
          message: code.includes('TIMEOUT') ? 'Graph API timed out' : `Graph API ${uncertain ? 'connection lost' : 'unreachable'} (${code})`,
        };
      }
      let body: any;
      try {
        body = await res.body.json();
      } catch (err) {
        // Accepted, but the answer (with the message id) was lost on the way.
        if (res.statusCode >= 200 && res.statusCode < 300)
          return {
            ok: false,
            retryable: true,
            uncertain: true,
            status: res.statusCode,
            message: `Graph API answer unreadable (${(err as { code?: string }).code ?? 'body'})`,
          };
        body = undefined;
      }
      if (res.statusCode >= 200 && res.statusCode < 300) {
        const id = body?.messages?.[0]?.id;
        // Graph's words are kept (stored with the send, its job, telemetry) with U+FFFD for a NUL (storable-text.ts).
        if (typeof id === 'string') return { ok: true, providerMessageId: storableText(id) };
        return { ok: false, retryable: false, status: res.statusCode, message: 'Graph API accepted the message but returned no id' };
      }
      const error = body?.error ?? {};
      const retryable = res.statusCode === 429 || res.statusCode >= 500;
      return {
        ok: false,
        retryable,
        status: res.statusCode,
        code: storableJson(error.code ?? res.statusCode),
        message: typeof error.message === 'string' ? storableText(error.message) : `Graph API answered HTTP ${res.statusCode}`,
        retryAfterMs: parseRetryAfter(res.headers['retry-after']),
      };
    },
  };
}
