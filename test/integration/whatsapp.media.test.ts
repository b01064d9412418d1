// Issue 18 part 4: a photo a customer sends reaches the model as structured content (media id, MIME
// type, caption); the integrator's tool downloads the file with the SDK's `downloadMedia`, which Parley
// fetches from the (fake) Graph API with the channel's token. The token never reaches the model or the SDK.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, ParleyMediaError, type DownloadedMedia } from '../../sdk/src/index.ts';
import { conversationIdFor } from '../../src/conversations/history.ts';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { signPayload } from '../../src/whatsapp/signature.ts';
import { loadFixture, metaWire } from '../fixtures/whatsapp/index.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { whatsappParley } from '../support/whatsapp-parley.ts';
import { until, WA } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const PHOTO = Buffer.from('\xff\xd8\xff\xe0 a damaged box, as JPEG bytes', 'latin1');
const MEDIA_ID = '1003383421387256';

async function post(p: TestParley, body: unknown) {
  const raw = metaWire(body);
  return fetch(`${p.url()}/wa/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signPayload(raw, WA.app_secret) },
    body: raw,
  });
}

describe('WhatsApp media', () => {
  it("a tool downloads the customer's photo through the SDK: Parley asks Graph with the channel's token; the model sees only the media data", async () => {
    const { p, graph } = await whatsappParley(open, { backend: false, whatsapp: { phone_id: '106540352242922' } });
    graph.addMedia(MEDIA_ID, { data: PHOTO, mimeType: 'image/jpeg', sha256: 'c2hhLW9mLXRoZS1waG90bw==' });
    const sdk = createClient();
    open.push(sdk);
    const downloads: DownloadedMedia[] = [];
    sdk.expose(
      'downloadMedia',
      { description: 'Download a media file (photo, document, voice note) the customer sent', parameters: z.object({ mediaId: z.string() }) },
      async ({ mediaId }) => {
        const file = await sdk.downloadMedia(mediaId);
        downloads.push(file);
        return { mediaId, mimeType: file.mimeType, size: file.size };
      },
    );
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });

    expect((await post(p, loadFixture('image-caption.json'))).status).toBe(200);
    const [reply] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    expect(downloads).toHaveLength(1);
    expect(downloads[0]).toMatchObject({ mediaId: MEDIA_ID, mimeType: 'image/jpeg', size: PHOTO.length, sha256: 'c2hhLW9mLXRoZS1waG90bw==' });
    expect(downloads[0].data.equals(PHOTO)).toBe(true);
    expect(reply.body.text.body).toContain(String(PHOTO.length));
    // Meta's two calls: the lookup (checked against our phone number id), then the file; both with the token.
    expect(graph.mediaRequests.map((r) => r.url)).toEqual([
      `/v21.0/${MEDIA_ID}?phone_number_id=106540352242922`,
      expect.stringMatching(/^\/whatsapp_business\/attachments\/\?mid=/),
    ]);
    expect(graph.mediaRequests.every((r) => r.headers.authorization === `Bearer ${WA.token}`)).toBe(true);
    // What the model and history saw: the media as data, never the token.
    const c = (await createCustomerRepo(p.services.store, p.services.clock).findBy('phone', '+16505551234'))!;
    const cid = conversationIdFor(c.customerId, 'whatsapp');
    const records = (await p.services.store.history.since(cid, 0)).map((r) => r.record);
    expect(records[0]).toMatchObject({
      role: 'user',
      data: { content: { type: 'media', mediaType: 'image', mediaId: MEDIA_ID, mimeType: 'image/jpeg', caption: 'This is the damaged box' } },
    });
    expect(records[0].text).toContain('"caption":"This is the damaged box"');
    expect(JSON.stringify(records)).not.toContain(WA.token);
  });

  it('unknown media → ParleyMediaError 404 media_not_found; a bad id → 400; no service secret → 401; before listen → not_listening', async () => {
    const { p } = await whatsappParley(open, { backend: false });
    const sdk = createClient();
    open.push(sdk);
    await expect(sdk.downloadMedia('1')).rejects.toMatchObject({ name: 'ParleyMediaError', code: 'not_listening' });
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    const missing = await sdk.downloadMedia('999000111').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ParleyMediaError);
    expect(missing).toMatchObject({ status: 404, code: 'media_not_found' });
    await expect(sdk.downloadMedia('../me')).rejects.toMatchObject({ status: 400, code: 'validation_failed' });
    const anonymous = await fetch(`${p.url()}/whatsapp/media/1234`);
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe('unauthorized');
  });

  it("test mode's mock sender (no Graph API to reach): 404 media_unavailable, never a call to Meta", async () => {
    const p = await startParley({ config: { channels: { whatsapp: { enabled: true, provider: 'meta', verify_token: 'v', app_secret: 's' } } } });
    open.push(p);
    const res = await fetch(`${p.url()}/whatsapp/media/1234`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('media_unavailable');
  });
});
