// The SDK's verifyWebhook against Parley's signWebhook: the header format, constant-time matching, the tolerance.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '../../sdk/src/index.ts';
import { retryDelay } from '../../src/webhooks/delivery.ts';

const SECRET = 'hook-secret-0123456789abcdef';
const event = { id: 'evt_1', type: 'handoff.requested', createdAt: 1_700_000_000_000, data: { conversationId: 'c1' } };
const body = JSON.stringify(event);
const t = 1_700_000_000;
const now = t * 1000;

describe('webhook signatures', () => {
  it('the header is t=<seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>, and verifies', () => {
    const header = signWebhook(SECRET, body, t);
    expect(header).toBe(`t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`);
    expect(verifyWebhook(body, header, SECRET, { now })).toEqual(event);
    expect(verifyWebhook(Buffer.from(body), header, SECRET, { now })).toEqual(event);
  });

  it('refuses a wrong secret, a changed body, a missing or malformed header, an old timestamp', () => {
    const header = signWebhook(SECRET, body, t);
    const refused = (fn: () => unknown) => expect(fn).toThrow(WebhookVerificationError);
    refused(() => verifyWebhook(body, header, 'another-secret-0123456789', { now }));
    refused(() => verifyWebhook(body.replace('c1', 'c2'), header, SECRET, { now }));
    refused(() => verifyWebhook(body, undefined, SECRET, { now }));
    refused(() => verifyWebhook(body, 'v1=abc', SECRET, { now }));
    refused(() => verifyWebhook(body, header.replace(`t=${t}`, `t=${t + 1}`), SECRET, { now }));
    expect(() => verifyWebhook(body, header, SECRET, { now: now + 301_000 })).toThrow(/tolerance/);
    expect(verifyWebhook(body, header, SECRET, { now: now + 301_000, toleranceSeconds: 400 })).toEqual(event);
  });

  it('any of several v1 signatures may match (a secret being rotated)', () => {
    const header = `${signWebhook('old-secret-0123456789abcdef', body, t)},v1=${signWebhook(SECRET, body, t).split('v1=')[1]}`;
    expect(verifyWebhook(body, header, SECRET, { now })).toEqual(event);
  });

  it('retry gaps double with equal jitter: every next gap is at least the previous one', () => {
    const low = () => 0;
    const high = () => 0.999999;
    for (let attempt = 0; attempt < 10; attempt++) expect(retryDelay(attempt + 1, 1000, low)).toBeGreaterThanOrEqual(retryDelay(attempt, 1000, high));
    expect(retryDelay(0, 1000, low)).toBe(500);
    expect(retryDelay(40, 1000, () => 1)).toBe(3600_000); // capped at an hour
  });
});
