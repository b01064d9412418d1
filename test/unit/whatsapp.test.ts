import { describe, expect, it } from 'vitest';
import { confirmationAnswer } from '../../src/whatsapp/channel.ts';
import { graphBody, parseRetryAfter } from '../../src/whatsapp/graph-client.ts';
import { backoffDelay, renderText } from '../../src/whatsapp/outbound.ts';
import { normalizePhone } from '../../src/whatsapp/phone.ts';
import { signPayload, verifySignature } from '../../src/whatsapp/signature.ts';
import { parseWebhook, WebhookPayloadError } from '../../src/whatsapp/webhook-payload.ts';
import { buttonReply, textMessage, webhookBody } from '../support/whatsapp.ts';

describe('webhook signature', () => {
  const raw = Buffer.from('{"object":"whatsapp_business_account"}');
  it('accepts the HMAC of the raw bytes only', () => {
    expect(verifySignature(raw, signPayload(raw, 's3'), 's3')).toBe(true);
    expect(verifySignature(raw, signPayload(raw, 's3').toUpperCase().replace('SHA256', 'sha256'), 's3')).toBe(true);
    const tampered = Buffer.from(raw);
    tampered[5] ^= 1;
    expect(verifySignature(tampered, signPayload(raw, 's3'), 's3')).toBe(false);
    expect(verifySignature(raw, signPayload(raw, 'other'), 's3')).toBe(false);
    expect(verifySignature(raw, undefined, 's3')).toBe(false);
    expect(verifySignature(raw, 'sha1=abc', 's3')).toBe(false);
    expect(verifySignature(raw, signPayload(raw, ''), '')).toBe(false);
  });
});

describe('phone numbers', () => {
  it('normalises to E.164', () => {
    expect(normalizePhone('15550003333')).toBe('+15550003333');
    expect(normalizePhone('+1 (555) 000-3333')).toBe('+15550003333');
    expect(normalizePhone('0049 30 1234567')).toBe('+49301234567');
    expect(normalizePhone('hello')).toBeNull();
    expect(normalizePhone('123')).toBeNull();
    expect(normalizePhone('0301234567')).toBeNull();
  });
});

describe('webhook payloads', () => {
  it('text, button and list replies, media with caption, unknown types, statuses', () => {
    const body = webhookBody(
      [
        textMessage('+15550001111', 'hi', 'w1'),
        buttonReply('+15550001111', 'confirm:x:yes', 'Yes'),
        {
          from: '15550001111',
          id: 'w3',
          timestamp: '1700000000',
          type: 'interactive',
          interactive: { type: 'list_reply', list_reply: { id: 'opt-2', title: 'Option 2' } },
        },
        { from: '15550001111', id: 'w4', timestamp: '1700000000', type: 'image', image: { id: 'm', caption: 'my receipt' } },
        { from: '15550001111', id: 'w5', timestamp: '1700000000', type: 'reaction', reaction: { emoji: '👍' } },
      ],
      [{ id: 'wamid.out', status: 'failed', recipient_id: '15550001111', timestamp: '1700000001', errors: [{ code: 131047, title: 'Re-engagement message' }] }],
    );
    const { messages, statuses } = parseWebhook(body);
    expect(messages.map((m) => [m.kind, m.text, m.replyId])).toEqual([
      ['text', 'hi', undefined],
      ['button', 'Yes', 'confirm:x:yes'],
      ['list', 'Option 2', 'opt-2'],
      ['media', '[WhatsApp image] {"type":"media","mediaType":"image","mediaId":"m","caption":"my receipt"}', undefined],
      ['other', '[WhatsApp reaction] {"type":"reaction","emoji":"👍"}', undefined],
    ]);
    expect(messages[0]).toMatchObject({ waMessageId: 'w1', from: '+15550001111', name: 'Test', phoneNumberId: '1234567890' });
    expect(statuses).toEqual([
      {
        providerMessageId: 'wamid.out',
        status: 'failed',
        recipient: '15550001111',
        timestampMs: 1700000001000,
        errors: [{ code: 131047, title: 'Re-engagement message' }],
        phoneNumberId: '1234567890',
      },
    ]);
  });

  it('fields Meta adds anywhere are accepted; a status error keeps its details', () => {
    const body = webhookBody(
      [{ ...textMessage('+15550001111', 'hi', 'w1'), context: { from: '1555', id: 'prev' }, referral: { source_url: 'https://x' } }],
      [
        {
          id: 'wamid.out',
          status: 'failed',
          recipient_id: '15550001111',
          timestamp: '1700000001',
          pricing: { billable: false },
          errors: [{ code: 131026, title: 'Undeliverable', error_data: { details: 'Receiver incapable' } }],
        },
      ],
    ) as { entry: { id: string; extra?: unknown; changes: { extra?: unknown; value: Record<string, unknown> }[] }[]; extra?: unknown };
    body.extra = 1;
    body.entry[0].extra = 2;
    body.entry[0].changes[0].extra = 3;
    body.entry[0].changes[0].value.new_field = { anything: true };
    const { messages, statuses } = parseWebhook(body);
    expect(messages.map((m) => m.text)).toEqual(['hi']);
    expect(statuses[0].errors).toEqual([{ code: 131026, title: 'Undeliverable', error_data: { details: 'Receiver incapable' } }]);
  });

  it('a malformed envelope is a typed error; a malformed message is an ignored part, not an error', () => {
    expect(() => parseWebhook({ object: 'page' })).toThrow(/entry/);
    expect(() => parseWebhook('x')).toThrow(WebhookPayloadError);
    const p = parseWebhook({ object: 'whatsapp_business_account', entry: [{ changes: [{ value: { messages: [{ id: 1 }] } }] }] });
    expect(p.messages).toEqual([]);
    expect(p.ignored).toEqual([{ part: 'message', type: 'unknown', reason: 'no message id or type' }]);
  });
});

describe('outbound', () => {
  it('Graph bodies for text, template and buttons', () => {
    expect(graphBody({ kind: 'text', to: '+15550001111', text: 'hi' })).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '15550001111',
      type: 'text',
      text: { preview_url: false, body: 'hi' },
    });
    expect(graphBody({ kind: 'template', to: '+1555', template: { name: 't', language: 'en', parameters: ['a'] } })).toMatchObject({
      type: 'template',
      template: { name: 't', language: { code: 'en' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'a' }] }] },
    });
    expect(graphBody({ kind: 'buttons', to: '+1555', text: 'ok?', buttons: [{ id: 'y', title: 'Yes' }] })).toMatchObject({
      type: 'interactive',
      interactive: { type: 'button', body: { text: 'ok?' }, action: { buttons: [{ type: 'reply', reply: { id: 'y', title: 'Yes' } }] } },
    });
  });

  it('a BSUID recipient goes in `recipient` (recipient_type individual, no `to`), as Meta documents', () => {
    const body = graphBody({ kind: 'text', to: 'US.13491208655302741918', text: 'hi', callbackData: 'out:1' });
    expect(body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      recipient: 'US.13491208655302741918',
      biz_opaque_callback_data: 'out:1',
      type: 'text',
      text: { preview_url: false, body: 'hi' },
    });
    expect(graphBody({ kind: 'template', to: 'BR.ENT.1502576394655843', template: { name: 't', language: 'en' } })).toMatchObject({
      recipient: 'BR.ENT.1502576394655843',
    });
    expect(graphBody({ kind: 'template', to: 'BR.ENT.1502576394655843', template: { name: 't', language: 'en' } })).not.toHaveProperty('to');
  });

  it('renders text for the outbox and the SDK', () => {
    expect(renderText({ kind: 'template', to: 'x', template: { name: 'order_shipped', language: 'en', parameters: ['1001', 'Tue'] } })).toBe(
      '[template:order_shipped] 1001 Tue',
    );
    expect(
      renderText({
        kind: 'buttons',
        to: 'x',
        text: 'Cancel?',
        buttons: [
          { id: 'a', title: 'Yes' },
          { id: 'b', title: 'No' },
        ],
      }),
    ).toBe('Cancel? [buttons: Yes | No]');
  });

  it('backoff: exponential with jitter, capped, never below Retry-After', () => {
    expect(backoffDelay(0, undefined, () => 1)).toBe(500);
    expect(backoffDelay(3, undefined, () => 1)).toBe(4000);
    expect(backoffDelay(20, undefined, () => 1)).toBe(30_000);
    expect(backoffDelay(0, 2000, () => 0.5)).toBe(2000);
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString(), Date.now())).toBeGreaterThan(3000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it('confirmation answers: buttons for this prompt, typed yes/no', () => {
    expect(confirmationAnswer({ text: 'Yes', replyId: 'confirm:p1:yes' }, 'p1')).toBe(true);
    expect(confirmationAnswer({ text: 'No', replyId: 'confirm:p1:no' }, 'p1')).toBe(false);
    expect(confirmationAnswer({ text: 'Yes', replyId: 'confirm:old:yes' }, 'p1')).toBeUndefined();
    expect(confirmationAnswer({ text: ' yes! ' }, 'p1')).toBe(true);
    expect(confirmationAnswer({ text: 'nope' }, 'p1')).toBe(false);
    expect(confirmationAnswer({ text: 'yes but change the address' }, 'p1')).toBeUndefined();
  });
});
