// Issue 18: Meta's webhook bodies as they are sent today (test/fixtures/whatsapp, shapes from Meta's
// reference and other projects' captures): every one parses, part by part; content is kept as data.
import { describe, expect, it } from 'vitest';
import { parseWebhook, WebhookPayloadError, type InboundMessage } from '../../src/whatsapp/webhook-payload.ts';
import { textForModel } from '../../src/whatsapp/content.ts';
import { FIXTURES, loadFixture, metaWire } from '../fixtures/whatsapp/index.ts';

const only = (file: string): InboundMessage => {
  const { messages } = parseWebhook(loadFixture(file));
  expect(messages).toHaveLength(1);
  return messages[0];
};

describe('every fixture', () => {
  for (const f of FIXTURES) {
    it(`${f.file}: parses (also as Meta's escaped wire bytes) into ${f.replies} customer message(s), ${f.ignored} unusable part(s)`, () => {
      const parsed = parseWebhook(JSON.parse(metaWire(loadFixture(f.file))));
      expect(parsed.messages).toHaveLength(f.replies);
      expect(parsed.ignored).toHaveLength(f.ignored);
    });
  }
});

describe('senders: phone, BSUID or both', () => {
  it('a username user with no phone number: identified by BSUID, with the username', () => {
    const m = only('text-bsuid-only.json');
    expect(m).toMatchObject({ bsuid: 'US.55501234000000000042', from: 'US.55501234000000000042', username: '@ada.lovelace', name: 'Ada', kind: 'text' });
    expect(m.phone).toBeUndefined();
  });

  it('both: phone (E.164) and BSUID; the queue orders by BSUID', () => {
    const m = only('text-bsuid-and-phone.json');
    expect(m).toMatchObject({ phone: '+16505551234', bsuid: 'US.13491208655302741918', from: 'US.13491208655302741918' });
  });

  it('phone only (before BSUIDs): as before', () => {
    const m = only('text-phone-only.json');
    expect(m).toMatchObject({ phone: '+16315551181', from: '+16315551181', name: 'Kerry Fisher', text: 'Hello! Do you ship to Canada?' });
    expect(m.bsuid).toBeUndefined();
  });

  it('statuses of a send to a BSUID name the recipient by recipient_user_id', () => {
    const { statuses } = parseWebhook(loadFixture('status-read-bsuid.json'));
    expect(statuses).toEqual([expect.objectContaining({ status: 'read', recipient: 'US.55501234000000000042', phoneNumberId: '106540352242922' })]);
  });
});

describe('content is kept as structured data', () => {
  it('media: id, MIME type, caption, file name; voice notes and animated stickers marked', () => {
    expect(only('image-caption.json').content).toEqual({
      type: 'media',
      mediaType: 'image',
      mediaId: '1003383421387256',
      mimeType: 'image/jpeg',
      caption: 'This is the damaged box',
      sha256: 'Kj9PxN/mQw7zYvRtLhbG8sF2dJp3BnKyUtVaXeWoMlc=',
    });
    expect(only('document.json').content).toMatchObject({
      mediaType: 'document',
      fileName: 'invoice-2026-05.pdf',
      mimeType: 'application/pdf',
      caption: 'Invoice for May',
    });
    const voice = only('audio-voice.json');
    expect(voice.content).toMatchObject({ mediaType: 'audio', voice: true, mediaId: '741920386504172' });
    expect(voice.text).toMatch(/^\[WhatsApp voice note\] /);
    expect(only('audio-file.json').content).toMatchObject({ mediaType: 'audio', voice: false });
    expect(only('audio-file.json').text).toMatch(/^\[WhatsApp audio\] /);
    expect(only('sticker.json').content).toMatchObject({ mediaType: 'sticker', animated: true });
    expect(only('video.json').kind).toBe('media');
  });

  it('location, shared contacts, flow reply (response JSON parsed), order, reaction', () => {
    expect(only('location.json').content).toEqual({
      type: 'location',
      latitude: 37.483307,
      longitude: -122.148981,
      name: 'Main office',
      address: '1 Hacker Way, Menlo Park, CA 94025',
      url: 'https://maps.example.com/?q=37.483307,-122.148981',
    });
    expect(only('contacts.json').content).toMatchObject({
      type: 'contacts',
      contacts: [{ name: 'Robert Smith', phones: [{ phone: '+1 (650) 555-1299', waId: '16505551299', type: 'WORK' }], org: { company: 'Example Corp' } }],
    });
    expect(only('flow-reply.json').content).toEqual({
      type: 'flow_reply',
      name: 'flow',
      body: 'Sent',
      response: { flow_token: 'return-1001', order_id: '1001', reason: 'arrived damaged', refund: true },
    });
    // Quantities and prices arrive as numbers or strings: both become numbers.
    expect(only('order.json').content).toEqual({
      type: 'order',
      catalogId: '354160437058781',
      text: 'Please deliver after 6pm',
      items: [
        { productRetailerId: 'SKU-HAMBURGER', quantity: 3, itemPrice: 30, currency: 'ILS' },
        { productRetailerId: 'SKU-SODA', quantity: 2, itemPrice: 10.5, currency: 'ILS' },
      ],
    });
    expect(only('reaction.json').content).toEqual({ type: 'reaction', emoji: '❤️', messageId: 'wamid.HBgLMTU1NTA3ODM4ODEVAgARGBJSRUFDVDAwMDAwMDAwMDAxAA==' });
  });

  it('the model reads typed words as they are, everything else as a label plus the JSON', () => {
    const loc = only('location.json');
    expect(loc.text.startsWith('[WhatsApp location] ')).toBe(true);
    expect(JSON.parse(loc.text.slice('[WhatsApp location] '.length))).toEqual(loc.content);
    expect(only('text.json').text).toBe('Hi, where is my order 1001?');
    expect(only('list-reply.json')).toMatchObject({ kind: 'list', text: 'Tuesday 10:00', replyId: 'slot-tue-10' });
    expect(only('button-template.json')).toMatchObject({ kind: 'button', text: 'Track my order', replyId: 'TRACK_ORDER_1001' });
    expect(textForModel({ type: 'welcome_request' })).toBe('[WhatsApp chat opened] {"type":"welcome_request"}');
  });

  it('what Parley cannot read is still a customer message, answered: unsupported types, an interactive without its object', () => {
    expect(only('unsupported.json').content).toEqual({ type: 'unsupported', messageType: 'poll_creation', detail: 'Message type unknown' });
    expect(only('interactive-unreadable.json').content).toEqual({ type: 'unsupported', messageType: 'interactive' });
    expect(only('request-welcome.json').content).toEqual({ type: 'welcome_request' });
  });
});

describe('events that are not customer messages', () => {
  it('a removed reaction (empty or absent emoji), an edit, a deletion: quiet events, no message', () => {
    for (const file of ['reaction-removed-empty.json', 'reaction-removed-absent.json']) {
      const p = parseWebhook(loadFixture(file));
      expect(p.quiet).toEqual([
        expect.objectContaining({ type: 'reaction_removed', originalId: 'wamid.HBgLMTU1NTA3ODM4ODEVAgARGBJSRUFDVDAwMDAwMDAwMDAxAA==' }),
      ]);
    }
    const edit = parseWebhook(loadFixture('edit.json')).quiet[0];
    expect(edit).toMatchObject({ type: 'edit', originalId: 'wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQUZCMDAwMDAwMDAwMDAwMDA2AA==' });
    expect(edit.content).toMatchObject({ type: 'media', caption: 'This is the damaged box (the lid)' });
    expect(parseWebhook(loadFixture('edit-as-unsupported.json')).quiet).toEqual([expect.objectContaining({ type: 'edit' })]);
    expect(parseWebhook(loadFixture('revoke.json')).quiet).toEqual([expect.objectContaining({ type: 'revoke' })]);
  });

  it('user_changed_number: from the old phone (and BSUID) to the new phone and its new BSUID', () => {
    const { events, messages } = parseWebhook(loadFixture('system-user-changed-number.json'));
    expect(messages).toEqual([]);
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'identity',
        systemType: 'user_changed_number',
        previous: { phone: '+16505551234', bsuid: 'US.13491208655302741918' },
        next: { phone: '+12195555358', bsuid: 'US.22005551234000000001' },
      }),
    ]);
  });

  it('user_changed_user_id: old BSUID (sender, or the body) to the new one; no phone involved', () => {
    const { events } = parseWebhook(loadFixture('system-user-changed-user-id.json'));
    expect(events).toEqual([
      expect.objectContaining({
        systemType: 'user_changed_user_id',
        previous: { bsuid: 'US.55501234000000000042' },
        next: { bsuid: 'US.77120033004455667788' },
      }),
    ]);
    // The old id only in the body (no from_user_id), as some captures have it.
    const body = loadFixture('system-user-changed-user-id.json');
    delete body.entry[0].changes[0].value.messages[0].from_user_id;
    expect(parseWebhook(body).events[0]).toMatchObject({ previous: { bsuid: 'US.55501234000000000042' }, next: { bsuid: 'US.77120033004455667788' } });
  });

  it('customer_identity_changed: a notice (same ids), no message', () => {
    const p = parseWebhook(loadFixture('system-customer-identity-changed.json'));
    expect(p.messages).toEqual([]);
    expect(p.events).toEqual([]);
    expect(p.quiet).toEqual([expect.objectContaining({ type: 'system', systemType: 'customer_identity_changed' })]);
  });
});

describe('one part Parley cannot use never rejects the others', () => {
  it('a message without id, a status without id, a contact that is not an object, a change without value: ignored, the rest kept', () => {
    const body = loadFixture('text.json');
    const value = body.entry[0].changes[0].value;
    value.messages.push({ from: '16505551234', type: 'text', text: { body: 'no id' } });
    value.statuses = [{ status: 'sent' }, { id: 'wamid.ok', status: 'delivered', recipient_id: '16505551234', timestamp: '1749854800' }];
    value.contacts.push('not a contact');
    body.entry[0].changes.push({ field: 'messages' });
    body.entry.push({ id: 'x' });
    const p = parseWebhook(body);
    expect(p.messages.map((m) => m.text)).toEqual(['Hi, where is my order 1001?']);
    expect(p.statuses.map((s) => s.providerMessageId)).toEqual(['wamid.ok']);
    expect(p.ignored.map((i) => [i.part, i.type])).toEqual([
      ['contact', 'contact'],
      ['message', 'text'],
      ['status', 'sent'],
      ['change', 'unknown'],
      ['entry', 'entry'],
    ]);
  });

  it('a message with no usable sender is ignored with its type; another object is ignored; only a broken envelope is an error', () => {
    const body = loadFixture('text-phone-only.json');
    const value = body.entry[0].changes[0].value;
    value.messages.push({ from: '<WHATSAPP_USER_PHONE_NUMBER>', id: 'wamid.nosender', timestamp: '1', type: 'image', image: { id: '1' } });
    value.contacts.push({ profile: { name: 'second' } });
    const p = parseWebhook(body);
    expect(p.messages).toHaveLength(1);
    expect(p.ignored).toEqual([{ part: 'message', type: 'image', reason: 'no sender (neither a phone number nor a BSUID)', id: 'wamid.nosender' }]);
    expect(parseWebhook({ object: 'page', entry: [] }).ignored).toEqual([{ part: 'entry', type: 'page', reason: 'not a WhatsApp Business Account webhook' }]);
    expect(() => parseWebhook({ object: 'whatsapp_business_account' })).toThrow(WebhookPayloadError);
    expect(() => parseWebhook('x')).toThrow(WebhookPayloadError);
  });
});
