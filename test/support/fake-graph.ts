// A local stand-in for Meta's Graph API: records requests, answers like Meta,
// and can be told to fail (429, 500, 400), hang (never accepted), or accept
// but answer too late (`slowMs`: delivered, status sent, response after the client gave up).
// Serves media like Meta: `GET /{media-id}` → a URL, `GET {url}` with the token → the bytes.
import Fastify from 'fastify';
import { signPayload } from '../../src/whatsapp/signature.ts';

export interface GraphRequest {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  at: number;
}

export type Failure =
  { status: 429; retryAfter?: string } | { status: 500 | 502 | 503 } | { status: 400; code?: number; message?: string } | { hang: true } | { slowMs: number };

export interface FakeGraph {
  url: string;
  requests: GraphRequest[];
  /** Successful sends only (what a phone would receive). */
  delivered(): GraphRequest[];
  failNext(...failures: Failure[]): void;
  /** Like Meta: post a signed `sent` status (echoing biz_opaque_callback_data) for every accepted message, retrying until 200. */
  sendStatusesTo(webhookUrl: string, appSecret: string): void;
  /** Holds status webhooks back (queued, not posted) until resumed: Meta being late. */
  holdStatuses(hold: boolean): void;
  /** A media file the Graph API will serve under this id. */
  addMedia(id: string, file: { data: Buffer; mimeType: string; sha256?: string }): void;
  /** Media lookups and downloads, with their headers. */
  mediaRequests: GraphRequest[];
  close(): Promise<void>;
}

export async function startFakeGraph(): Promise<FakeGraph> {
  const app = Fastify({ logger: false });
  const requests: GraphRequest[] = [];
  const ok: GraphRequest[] = [];
  const failures: Failure[] = [];
  const hanging = new Set<() => void>();
  let n = 0;
  let statusTarget: { url: string; secret: string } | undefined;
  let closed = false;
  let held = false;
  const pendingStatuses: { status: Record<string, unknown>; phoneId: string; until: number }[] = [];
  // Like Meta, statuses are batched into one webhook call and retried until acknowledged.
  const pump = async () => {
    while (!closed && !held && statusTarget && pendingStatuses.length) {
      const phoneId = pendingStatuses[0].phoneId;
      const batch = pendingStatuses.slice(0, 100).filter((b) => b.phoneId === phoneId);
      const body = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'WABA',
            changes: [
              { field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: phoneId }, statuses: batch.map((b) => b.status) } },
            ],
          },
        ],
      });
      let delivered: boolean;
      try {
        const res = await fetch(statusTarget.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-hub-signature-256': signPayload(body, statusTarget.secret) },
          body,
        });
        delivered = res.ok;
      } catch {
        delivered = false;
      }
      if (delivered || Date.now() > batch[0].until) for (const b of batch) pendingStatuses.splice(pendingStatuses.indexOf(b), 1);
      else await new Promise((r) => setTimeout(r, 100));
    }
    pumping = false;
  };
  let pumping = false;
  const queueStatus = (wamid: string, to: { to?: string; recipient?: string }, phoneId: string, callbackData?: string) => {
    if (!statusTarget) return;
    const status = {
      id: wamid,
      status: 'sent',
      // Like Meta: a send to a BSUID is reported with `recipient_user_id` and no `recipient_id`.
      ...(to.to ? { recipient_id: to.to } : { recipient_user_id: to.recipient }),
      timestamp: String(Math.floor(Date.now() / 1000)),
      ...(callbackData ? { biz_opaque_callback_data: callbackData } : {}),
    };
    pendingStatuses.push({ status, phoneId, until: Date.now() + 60_000 });
    if (!pumping) {
      pumping = true;
      void pump();
    }
  };
  app.post('/v21.0/:phoneId/messages', async (request, reply) => {
    const rec = { url: request.url, headers: request.headers, body: request.body, at: Date.now() };
    requests.push(rec);
    const f = failures.shift();
    if (f && 'hang' in f) {
      await new Promise<void>((resolve) => hanging.add(resolve));
      return reply.code(504).send({});
    }
    const slowMs = f && 'slowMs' in f ? f.slowMs : 0;
    if (f && 'status' in f && f.status === 429)
      return reply
        .code(429)
        .header('retry-after', f.retryAfter ?? '0')
        .send({ error: { message: 'Rate limited', type: 'OAuthException', code: 4, fbtrace_id: 'x' } });
    if (f && 'status' in f && f.status >= 500)
      return reply.code(f.status).send({ error: { message: 'Service unavailable', type: 'OAuthException', code: 2, fbtrace_id: 'x' } });
    if (f && 'status' in f && f.status === 400) {
      return reply.code(400).send({
        error: {
          message: f.message ?? '(#131030) Recipient phone number not in allowed list',
          type: 'OAuthException',
          code: f.code ?? 131030,
          fbtrace_id: 'x',
        },
      });
    }
    ok.push(rec);
    const body = request.body as { to?: string; recipient?: string; biz_opaque_callback_data?: string };
    const wamid = `wamid.fake.${++n}`;
    queueStatus(wamid, body, (request.params as { phoneId: string }).phoneId, body.biz_opaque_callback_data);
    if (slowMs) await new Promise((r) => setTimeout(r, slowMs));
    const contact = body.to ? { input: body.to, wa_id: body.to } : { input: body.recipient, user_id: body.recipient };
    return { messaging_product: 'whatsapp', contacts: [contact], messages: [{ id: wamid }] };
  });
  const media = new Map<string, { data: Buffer; mimeType: string; sha256?: string }>();
  const mediaRequests: GraphRequest[] = [];
  let address = '';
  app.get('/v21.0/:mediaId', async (request, reply) => {
    mediaRequests.push({ url: request.url, headers: request.headers, body: undefined, at: Date.now() });
    const { mediaId } = request.params as { mediaId: string };
    const file = media.get(mediaId);
    if (!request.headers.authorization) return reply.code(401).send({ error: { message: 'An access token is required', type: 'OAuthException', code: 104 } });
    if (!file)
      return reply
        .code(400)
        .send({ error: { message: `Unsupported get request. Object with ID '${mediaId}' does not exist`, type: 'GraphMethodException', code: 100 } });
    return {
      messaging_product: 'whatsapp',
      url: `${address}/whatsapp_business/attachments/?mid=${mediaId}&ext=1&hash=x`,
      mime_type: file.mimeType,
      ...(file.sha256 ? { sha256: file.sha256 } : {}),
      file_size: file.data.length,
      id: mediaId,
    };
  });
  app.get('/whatsapp_business/attachments/', async (request, reply) => {
    mediaRequests.push({ url: request.url, headers: request.headers, body: undefined, at: Date.now() });
    const file = media.get(String((request.query as { mid?: string }).mid));
    if (!request.headers.authorization) return reply.code(401).send('');
    if (!file) return reply.code(404).send('');
    return reply.type(file.mimeType).send(file.data);
  });
  address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `${address}/v21.0`,
    requests,
    mediaRequests,
    addMedia: (id, file) => void media.set(id, file),
    delivered: () => ok,
    failNext: (...f) => void failures.push(...f),
    sendStatusesTo(url, secret) {
      statusTarget = { url, secret };
      if (!pumping && pendingStatuses.length) {
        pumping = true;
        void pump();
      }
    },
    holdStatuses(hold) {
      held = hold;
      if (!hold && !pumping && statusTarget && pendingStatuses.length) {
        pumping = true;
        void pump();
      }
    },
    async close() {
      closed = true;
      for (const h of hanging) h();
      await app.close();
    },
  };
}
