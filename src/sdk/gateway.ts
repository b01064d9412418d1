// GET /sdk — the backend SDK's WebSocket (protocol: sdk/src/protocol.ts).
//
// Requires @fastify/websocket registered once by the app, before this plugin:
//   app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES }, preClose: closeWebSocketsGoingAway })  (http/websocket-scope.ts)
// (an oversize frame closes 1009; on shutdown every socket closes 1001 — the
// plugin's default preClose runs before any hook of ours and closes with no code).
// Refusals happen before the upgrade, in a route-level onRequest hook:
// 401 without the service secret, 503 when the 32 SDK slots are taken (the slot
// is reserved synchronously there, so concurrent upgrades cannot overshoot).
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WebSocket, type RawData } from 'ws';
import type { z } from 'zod';
import {
  CloseCodes,
  ErrorFrame,
  IngestFrame,
  SummaryFrame,
  MAX_FRAME_BYTES,
  RegisterFrame,
  ResultFrame,
  SentFrame,
  type ClientFrame,
  type ServerFrame,
} from '../../sdk/src/protocol.ts';
import { bearerToken, safeEqual } from '../http/auth.ts';
import { sendError } from '../http/errors.ts';
import { jsonDepth, MAX_JSON_DEPTH, textFaultAt } from '../http/json-body.ts';
import { jsonHoldsNul, NUL_REFUSED } from '../http/storable-text.ts';
import { sendCoalesced } from '../http/ws-send.ts';
import type { Services } from '../services.ts';
import type { IngestHandler, SdkHubRuntime } from './hub.ts';
import type { SupervisorRuntime } from '../runtime/supervisor.ts';
import { clip } from '../log-scrub.ts';

export interface SdkGatewayOptions {
  services: Services;
  hub: SdkHubRuntime;
  supervisor: SupervisorRuntime;
  /** Handles `ingest` frames; defaults to the hub's handler (answers "ingest is not enabled" until one is set). */
  onIngest?: IngestHandler;
  /** Heartbeat (real timers): ping every `pingIntervalMs`, terminate after `deadAfterMs` without a pong. */
  pingIntervalMs?: number;
  deadAfterMs?: number;
}

const CLIENT_SCHEMAS: Record<string, z.ZodType> = {
  register: RegisterFrame,
  result: ResultFrame,
  sent: SentFrame,
  ingest: IngestFrame,
  summary: SummaryFrame,
  error: ErrorFrame,
};

/** `resultId`: a refused `result` frame names its invoke, which then fails at once instead of waiting for the timeout. */
type Parsed = { ok: true; frame: ClientFrame } | { ok: false; message: string; resultId?: string };

/** Parses one text frame; the message names what is wrong. */
export function parseClientFrame(data: RawData, isBinary: boolean): Parsed {
  if (isBinary) return { ok: false, message: 'binary frames are not accepted; send JSON text' };
  // ws is told not to check (skipUTF8Validation, websocket-scope.ts): it would close the connection without a word.
  const text = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  if (!isUtf8(text)) return { ok: false, message: 'frame is not valid UTF-8 text' };
  const json = text.toString();
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return { ok: false, message: 'frame is not valid JSON' };
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, message: 'frame must be a JSON object' };
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== 'string') return { ok: false, message: 'frame has no "type" string' };
  const schema = CLIENT_SCHEMAS[type];
  if (!schema) return { ok: false, message: `unknown frame type "${type.slice(0, 64)}"` };
  const id = (raw as { id?: unknown }).id;
  const refuse = (message: string): Parsed => ({ ok: false, message, ...(type === 'result' && typeof id === 'string' ? { resultId: id } : {}) });
  // Bounded like HTTP bodies: deeper data would make validation, logging and storage recurse without limit.
  if (jsonDepth(raw, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return refuse(`${type} frame nested deeper than ${MAX_JSON_DEPTH} levels`);
  // An ingested message with lone surrogates would be acknowledged and then stored changed (UTF-8 cannot hold them), one
  // with a NUL not stored at all on PostgreSQL: refused before the ack. Every other frame holding a NUL is refused too
  // (a tool's result or error, a summary, a registration: no store keeps U+0000, and the backend can be told); a refused
  // `result` fails its call at once, as a tool error the model is told about. Lone surrogates pass in those: a cut emoji
  // must not fail a tool call.
  const textFault = type === 'ingest' ? textFaultAt(raw) : jsonHoldsNul(json) ? NUL_REFUSED : undefined;
  if (textFault !== undefined) return refuse(`${type} frame: ${textFault}`);
  const r = schema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${[type, ...i.path.map(String)].join('.')}: ${i.message}`).join('; ');
    return { ok: false, message: issues };
  }
  return { ok: true, frame: r.data as ClientFrame };
}

export async function sdkGatewayPlugin(app: FastifyInstance, o: SdkGatewayOptions) {
  const { services, hub, supervisor } = o;
  const log = services.logger.child({ component: 'sdk-gateway' });
  const pingIntervalMs = o.pingIntervalMs ?? 30_000;
  const deadAfterMs = o.deadAfterMs ?? 60_000;
  const ingest: IngestHandler = o.onIngest ?? ((frame, id) => hub.ingest(frame, id));

  if (!app.hasDecorator('websocketServer')) {
    throw new Error('sdkGatewayPlugin needs @fastify/websocket registered first (options: { maxPayload: MAX_FRAME_BYTES })');
  }
  const maxPayload = (app.websocketServer as { options?: { maxPayload?: number } }).options?.maxPayload;
  if (maxPayload !== MAX_FRAME_BYTES) log.warn({ maxPayload, expected: MAX_FRAME_BYTES }, '@fastify/websocket maxPayload differs from the SDK frame limit');

  const reservations = new WeakMap<FastifyRequest, string>();
  const sockets = new Set<WebSocket>();

  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(request.headers.authorization);
    if (!token || !safeEqual(token, services.secret)) {
      return sendError(reply, 'unauthorized', 'Missing or invalid Authorization: Bearer <SERVICE_SDK_SECRET>');
    }
    const connectionId = supervisor.reserveSdkSlot();
    if (!connectionId) {
      return sendError(reply, 'too_many_connections', 'All SDK connection slots are in use; retry later');
    }
    reservations.set(request, connectionId);
  };

  // The upgrade did not happen (not a WebSocket request, handshake failed): give the slot back.
  const onResponse = async (request: FastifyRequest) => {
    const connectionId = reservations.get(request);
    if (connectionId) {
      reservations.delete(request);
      supervisor.releaseSdkSlot(connectionId);
    }
  };

  // Also here in case the app kept the default preClose (which would have closed them first, without a code).
  app.addHook('preClose', async () => {
    for (const socket of sockets) socket.close(CloseCodes.goingAway, 'server shutting down');
  });

  // A plain GET (no upgrade) gets a 426 error body; @fastify/websocket's default is an empty 404.
  app.route({
    method: 'GET',
    url: '/sdk',
    onRequest,
    onResponse,
    handler: (_request, reply) =>
      sendError(reply.header('upgrade', 'websocket'), 'upgrade_required', 'This is a WebSocket endpoint: connect with a WebSocket upgrade'),
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      const connectionId = reservations.get(request);
      reservations.delete(request);
      if (!connectionId) {
        socket.close(1011, 'no connection slot');
        return;
      }
      sockets.add(socket);

      const send = (frame: ServerFrame) => {
        if (socket.readyState === WebSocket.OPEN) sendCoalesced(socket, JSON.stringify(frame));
      };
      hub.attach(connectionId, { send, close: (code, reason) => socket.close(code, reason) });
      log.info({ connectionId }, 'SDK connected');

      let lastPong = Date.now();
      socket.on('pong', () => (lastPong = Date.now()));
      const heartbeat = setInterval(() => {
        if (Date.now() - lastPong >= deadAfterMs) {
          log.warn({ connectionId }, 'SDK connection missed its pongs: terminating');
          socket.terminate();
          return;
        }
        socket.ping();
      }, pingIntervalMs);
      heartbeat.unref();

      socket.on('message', (data, isBinary) => {
        lastPong = Date.now(); // any traffic proves the peer is alive
        const parsed = parseClientFrame(data, isBinary);
        if (!parsed.ok) {
          if (parsed.resultId)
            hub.handleResult(connectionId, {
              type: 'result',
              id: parsed.resultId,
              ok: false,
              error: { code: 'bad_result', message: `The SDK's answer was refused: ${parsed.message}` },
            });
          return send({ type: 'error', code: 'bad_frame', message: parsed.message });
        }
        const frame = parsed.frame;
        switch (frame.type) {
          case 'register': {
            const f = frame;
            const actor = supervisor.sdkConnection(connectionId);
            if (!actor) return send({ type: 'error', code: 'not_open', message: 'this connection can no longer register' });
            actor.send({ type: 'register', functions: f.functions, sdk: f.sdk, sendProvider: f.sendProvider, at: services.clock.now() });
            return;
          }
          case 'result':
            return hub.handleResult(connectionId, frame);
          case 'sent':
            return hub.handleSent(connectionId, frame);
          case 'summary':
            return hub.handleSummary(connectionId, frame);
          case 'ingest': {
            const f = frame;
            void ingest(f, connectionId)
              .catch((err: unknown) => {
                log.error({ err, connectionId }, 'ingest failed');
                return { ok: false, error: 'ingest failed' };
              })
              .then((r) => send({ type: 'ack', id: f.id, ok: r.ok, ...(r.error ? { error: r.error } : {}) }));
            return;
          }
          case 'error':
            // The SDK's own words, cut: a frame may be up to 1 MiB, and this line is written for each one.
            log.warn({ connectionId, code: clip(frame.code, 64), message: clip(frame.message) }, 'SDK reported an error');
            return;
        }
      });

      // A connection lost or a client breaking the protocol: logged without a stack (any client can cause it).
      socket.on('error', (err: NodeJS.ErrnoException) => log.info({ connectionId, code: err.code, reason: err.message }, 'SDK socket error'));
      socket.on('close', (code) => {
        clearInterval(heartbeat);
        sockets.delete(socket);
        hub.detach(connectionId, code);
      });
    },
  });
}
