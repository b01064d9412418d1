// Media a customer sent on WhatsApp, fetched from the Graph API with the
// channel's token, for the integrator's backend: `GET /whatsapp/media/:mediaId`
// (service secret) streams the file back. The token stays in Parley: the
// model only ever sees the media id, the backend only the secret it already
// has. Two Graph calls, as Meta documents: `GET /{media-id}` (with
// `phone_number_id`, so Meta checks the media belongs to this number) answers
// a short-lived URL and the MIME type; `GET {url}` with the token is the file.
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError } from '../http/errors.ts';
import type { Services } from '../services.ts';

export interface GraphMediaOptions {
  graphUrl: string;
  phoneId: string;
  token: string;
  timeoutMs: number;
}

/** Meta's media ids are numeric; anything else is refused before a request is made. */
const MEDIA_ID = /^[0-9]{1,64}$/;

const graphError = (status: number, what: string): HttpError => {
  if (status === 400 || status === 404)
    return new HttpError('media_not_found', `WhatsApp has no such media (${what}: HTTP ${status}); media ids expire after 30 days`);
  if (status === 401 || status === 403) return new HttpError('upstream_error', `the Graph API refused the channel's token (${what}: HTTP ${status})`);
  if (status === 429) return new HttpError('unavailable', `the Graph API is rate limiting (${what}); try again later`);
  return new HttpError('upstream_error', `the Graph API answered HTTP ${status} (${what})`);
};

const networkError = (err: unknown, what: string): HttpError => {
  const code = (err as { code?: string }).code ?? 'network_error';
  return new HttpError(code.includes('TIMEOUT') ? 'upstream_timeout' : 'upstream_error', `the Graph API could not be reached (${what}: ${code})`);
};

export async function whatsappMediaPlugin(app: FastifyInstance, o: { services: Services; graph?: GraphMediaOptions }) {
  const { services, graph } = o;
  app.get('/whatsapp/media/:mediaId', { onRequest: requireServiceSecret(() => services.secret) }, async (req, reply) => {
    const { mediaId } = req.params as { mediaId: string };
    if (!MEDIA_ID.test(mediaId)) throw new HttpError('validation_failed', 'mediaId: a WhatsApp media id is digits only');
    if (!graph) throw new HttpError('media_unavailable', 'Media download needs the built-in WhatsApp adapter with a token (not the test-mode mock sender)');
    const auth = { authorization: `Bearer ${graph.token}` };
    const timeouts = { headersTimeout: graph.timeoutMs, bodyTimeout: graph.timeoutMs };

    let meta: { url?: unknown; mime_type?: unknown; sha256?: unknown; file_size?: unknown };
    try {
      const url = `${graph.graphUrl.replace(/\/$/, '')}/${mediaId}?phone_number_id=${encodeURIComponent(graph.phoneId)}`;
      const res = await request(url, { method: 'GET', headers: auth, ...timeouts });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw graphError(res.statusCode, 'media lookup');
      }
      meta = (await res.body.json()) as typeof meta;
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw networkError(err, 'media lookup');
    }
    if (typeof meta?.url !== 'string' || !/^https?:\/\//.test(meta.url)) throw new HttpError('upstream_error', 'the Graph API answered no media URL');

    let file;
    try {
      file = await request(meta.url, { method: 'GET', headers: auth, ...timeouts });
    } catch (err) {
      throw networkError(err, 'media download');
    }
    if (file.statusCode !== 200) {
      await file.body.dump();
      throw graphError(file.statusCode, 'media download');
    }
    services.logger.debug({ mediaId }, 'WhatsApp media proxied');
    const mimeType = typeof meta.mime_type === 'string' ? meta.mime_type : String(file.headers['content-type'] ?? 'application/octet-stream');
    reply.header('content-type', mimeType);
    reply.header('x-whatsapp-media-id', mediaId);
    if (typeof meta.sha256 === 'string') reply.header('x-whatsapp-sha256', meta.sha256);
    const length = file.headers['content-length'];
    if (typeof length === 'string') reply.header('content-length', length);
    return reply.send(file.body);
  });
}
