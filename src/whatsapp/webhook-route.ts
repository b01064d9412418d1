// The webhook route (provider "meta"): GET answers Meta's verification challenge; POST checks the signature over the
// raw bytes, parses the body, and queues the customers' messages and stores the statuses before its 200.
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { safeEqual } from '../http/auth.ts';
import { HttpError, sendError } from '../http/errors.ts';
import { jsonDepth, MAX_JSON_DEPTH } from '../http/json-body.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { withinDeadline } from '../store/deadline.ts';
import type { WhatsAppConfig } from './config-check.ts';
import type { AcceptInbound } from './ingest.ts';
import { verifySignature } from './signature.ts';
import { parseWebhook, WebhookPayloadError, type ParsedWebhook, type WhatsAppStatus } from './webhook-payload.ts';
import { reportWebhookParts } from './webhook-report.ts';

interface RouteDeps {
  wa: WhatsAppConfig;
  log: Logger;
  telemetry: Services['telemetry'];
  acceptInbound: AcceptInbound;
  recordStatuses: (statuses: WhatsAppStatus[]) => Promise<void>;
}

export function createWebhookPlugin(deps: RouteDeps): (app: FastifyInstance) => Promise<void> {
  const { wa, log, telemetry } = deps;
  const forUs = <T extends { phoneNumberId: string }>(items: T[], what: string) => ourItems(deps, items, what);
  return async (app) => {
    if (!wa.enabled || wa.provider !== 'meta') return;
    await app.register(async (scope) => {
      // The signature covers the raw bytes: keep them.
      scope.removeContentTypeParser('application/json');
      scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      scope.get(wa.webhook_path, async (request, reply) => {
        const q = request.query as Record<string, unknown>;
        const mode = q['hub.mode'];
        const token = q['hub.verify_token'];
        const challenge = q['hub.challenge'];
        if (mode === 'subscribe' && typeof token === 'string' && safeEqual(token, wa.verify_token) && typeof challenge === 'string') {
          return reply.type('text/plain; charset=utf-8').send(challenge);
        }
        return sendError(reply, 'forbidden', 'Verification failed');
      });
      scope.post(wa.webhook_path, async (request, reply) => {
        const raw = request.body;
        if (!Buffer.isBuffer(raw) || !verifySignature(raw, request.headers['x-hub-signature-256'], wa.app_secret)) {
          return sendError(reply, 'invalid_signature', 'Missing or invalid x-hub-signature-256');
        }
        const parsed = parseBody(raw);
        // Customer messages and identity changes are queued (durable, ordered per user); the rest starts no turn.
        // Statuses are acknowledged too: stored before the 200 (one marks an interrupted send as delivered). A store
        // that cannot write, or answers too slowly, is a 503 (the error handler): Meta retries, nothing is lost.
        const queued = await withinDeadline(
          (async () => {
            const n = await deps.acceptInbound(forUs([...parsed.messages, ...parsed.events], 'messages'), 'webhook');
            await deps.recordStatuses(forUs(parsed.statuses, 'statuses'));
            return n;
          })(),
        );
        reportWebhookParts({ ignored: parsed.ignored, quiet: forUs(parsed.quiet, 'events'), log, telemetry });
        return { received: parsed.received, queued, statuses: parsed.statuses.length, ignored: parsed.ignored.length };
      });
    });
  };
}

/** A signed body read as JSON (no prototype pollution, bounded depth) and as Meta's webhook; a 400 when it is neither. */
function parseBody(raw: Buffer): ParsedWebhook {
  let json: unknown;
  try {
    json = sjson.parse(raw.toString('utf8'), { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new HttpError('bad_request', 'Body is not valid JSON');
  }
  if (jsonDepth(json, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) throw new HttpError('bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return parseWebhook(json);
  } catch (err) {
    if (err instanceof WebhookPayloadError) throw new HttpError('validation_failed', err.message);
    throw err;
  }
}

/**
 * What Meta sends for the business's numbers: all of them (`other_numbers: answer`), or only phone_id's; with no
 * phone_id configured (test mode's mock) everything is ours.
 */
function ourItems<T extends { phoneNumberId: string }>(deps: Pick<RouteDeps, 'wa' | 'log' | 'telemetry'>, items: T[], what: string): T[] {
  const { wa, log, telemetry } = deps;
  if (!wa.phone_id || wa.other_numbers === 'answer') return items;
  const ours = items.filter((x) => x.phoneNumberId === wa.phone_id);
  if (ours.length < items.length) {
    const others = [...new Set(items.filter((x) => x.phoneNumberId !== wa.phone_id).map((x) => x.phoneNumberId))];
    log.warn({ ignored: items.length - ours.length, phoneNumberIds: others }, `webhook ${what} for another phone number ignored`);
    telemetry.event({ type: 'whatsapp.ignored', channel: 'whatsapp', data: { what, count: items.length - ours.length, phoneNumberIds: others } });
  }
  return ours;
}
