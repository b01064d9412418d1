// Signatures of Parley's outbound webhooks: `parley-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
// Parley signs with `signWebhook`; a receiver checks with `verifyWebhook` (constant time, with a tolerance on `t`
// against replays).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookEvent } from './agent-api.ts';

export const SIGNATURE_HEADER = 'parley-signature';

const hmac = (secret: string, t: number, body: string | Buffer) =>
  createHmac('sha256', secret)
    .update(`${t}.`)
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('hex');

/** The header value for `body` sent at `t` (unix seconds). */
export function signWebhook(secret: string, body: string | Buffer, t: number): string {
  return `t=${t},v1=${hmac(secret, t, body)}`;
}

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyWebhookOptions {
  /** How far `t` may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in ms (tests). */
  now?: number;
}

/**
 * Checks a webhook's `parley-signature` header against the raw body (the exact bytes received: parse it only after)
 * and returns the event. Throws `WebhookVerificationError` when the header is missing or malformed, no `v1` matches,
 * `t` is outside the tolerance, or the body is not an event.
 */
export function verifyWebhook(rawBody: string | Buffer, header: string | string[] | undefined, secret: string, o: VerifyWebhookOptions = {}): WebhookEvent {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) throw new WebhookVerificationError(`No ${SIGNATURE_HEADER} header`);
  let t: number | undefined;
  const signatures: string[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (key === 't' && /^\d+$/.test(v)) t = Number(v);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(v)) signatures.push(v.toLowerCase());
  }
  if (t === undefined || signatures.length === 0) throw new WebhookVerificationError(`Malformed ${SIGNATURE_HEADER} header`);
  const expected = Buffer.from(hmac(secret, t, rawBody), 'hex');
  let match = false;
  // Every candidate is compared (no early exit), each in constant time.
  for (const s of signatures) match = timingSafeEqual(expected, Buffer.from(s, 'hex')) || match;
  if (!match) throw new WebhookVerificationError('Signature does not match');
  const tolerance = o.toleranceSeconds ?? 300;
  const now = Math.floor((o.now ?? Date.now()) / 1000);
  if (Math.abs(now - t) > tolerance) throw new WebhookVerificationError(`Timestamp outside the tolerance (${tolerance} s)`);
  let json: unknown;
  try {
    json = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('Body is not JSON');
  }
  const event = WebhookEvent.safeParse(json);
  if (!event.success) throw new WebhookVerificationError('Body is not a Parley event');
  return event.data;
}
