// Meta signs each webhook POST: `x-hub-signature-256: sha256=<hex>`, an
// HMAC-SHA256 of the raw request bytes with the app secret.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signPayload(raw: Buffer | string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}`;
}

export function verifySignature(raw: Buffer, header: string | string[] | undefined, appSecret: string): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value || !appSecret) return false;
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(value.trim());
  if (!m) return false;
  const given = Buffer.from(m[1].toLowerCase(), 'hex');
  const expected = createHmac('sha256', appSecret).update(raw).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
