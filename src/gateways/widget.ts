// GET /widget/ws — the widget protocol (sdk/src/widget-protocol.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { WidgetClientFrame, WIDGET_MAX_FRAME_BYTES } from '../../sdk/src/widget-protocol.ts';
import { resumeAnonymous } from '../customers/anonymous.ts';
import type { CustomerRepo, Customer } from '../customers/repo.ts';
import type { ConversationHost } from '../conversations/host.ts';
import { conversationIdFor } from '../conversations/history.ts';
import type { HistoryStore } from '../store/repos.ts';
import { sendError } from '../http/errors.ts';
import { jsonDepth, MAX_JSON_DEPTH } from '../http/json-body.ts';
import { createRateLimiter } from '../limits/rate-limiter.ts';
import type { Services } from '../services.ts';
import { sendFrame, type WebSessions } from '../channels/web-sessions.ts';
import { withinDeadline } from '../store/deadline.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import { toWidgetHistory } from '../channels/widget-history.ts';

export interface SessionTokenVerifier {
  verify(token: string, customerId: string): { ok: true } | { ok: false; reason: string };
}

export interface WidgetGatewayOptions {
  services: Services;
  customers: CustomerRepo;
  history: HistoryStore;
  host: ConversationHost;
  sessions: WebSessions;
  tokens: SessionTokenVerifier;
}

const INIT_TIMEOUT_MS = 10_000;
/** Stored records read for `ready` (messages and confirmations). */
const HISTORY_ON_READY = 150;

export function originAllowed(origin: string | undefined, allowed: string[]): boolean {
  if (!origin) return true; // not a browser: the session token still decides
  if (allowed.includes('*')) return true;
  return allowed.some((a) => a.replace(/\/$/, '').toLowerCase() === origin.replace(/\/$/, '').toLowerCase());
}

export async function widgetGatewayPlugin(app: FastifyInstance, o: WidgetGatewayOptions) {
  const { services, customers, history, host, sessions } = o;
  const { clock, config, logger } = services;
  const limiter = createRateLimiter({
    perMinute: config.channels.web.rate_limit_per_minute,
    burst: Math.max(5, Math.ceil(config.channels.web.rate_limit_per_minute / 3)),
    now: clock.now,
  });
  const log = logger.child({ component: 'widget' });

  const onRequest = async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
    if (!config.channels.web.enabled) return sendError(reply, 404, 'not_found', 'The web channel is disabled');
    if (!originAllowed(request.headers.origin, config.channels.web.allowed_origins)) {
      return sendError(reply, 403, 'forbidden_origin', 'This origin may not open the widget');
    }
  };

  // A plain GET (no upgrade) gets a 426 error body; @fastify/websocket's default is an empty 404.
  app.route({
    method: 'GET',
    url: '/widget/ws',
    onRequest,
    handler: (_request, reply) =>
      sendError(reply.header('upgrade', 'websocket'), 426, 'upgrade_required', 'This is a WebSocket endpoint: connect with a WebSocket upgrade'),
    wsHandler: (socket: WebSocket) => {
      let customer: Customer | undefined;
      let conversationId = '';
      const error = (code: string, message: string) => sendFrame(socket, { type: 'error', code, message });
      const initTimer = clock.setTimeout(() => {
        if (!customer) {
          error('init_timeout', 'Send init first');
          socket.close(4008, 'init timeout');
        }
      }, INIT_TIMEOUT_MS);

      const refuse = (code: string, message: string) => {
        error(code, message);
        socket.close(4001, code);
      };

      const init = async (frame: Extract<WidgetClientFrame, { type: 'init' }>) => {
        if (customer) return error('already_initialized', 'init was already accepted on this connection');
        let found: Customer | undefined;
        if (frame.authToken) {
          const v = o.tokens.verify(frame.authToken, frame.customerId);
          if (!v.ok) return refuse('unauthorized', `Session token refused (${v.reason})`);
          found = await customers.get(frame.customerId);
          if (!found) return refuse('unauthorized', 'Unknown customer');
        } else if (config.identity.allow_anonymous) {
          if (!frame.email) return refuse('unauthorized', 'Anonymous init needs customerId and email');
          const anonymous = await resumeAnonymous(customers, { customerId: frame.customerId, email: frame.email });
          if (!anonymous.ok) return refuse('unauthorized', anonymous.reason);
          found = anonymous.customer;
        } else {
          return refuse('unauthorized', 'authToken is required (anonymous widget sessions are disabled)');
        }
        clock.clearTimeout(initTimer);
        customer = found;
        conversationId = conversationIdFor(found.customerId, 'web');
        // Added before the history is read (nothing committed in between is missed), held until `ready` is out.
        sessions.add(found.customerId, socket, { hold: true });
        const [records, record] = await Promise.all([
          history.recent(conversationId, HISTORY_ON_READY, ['user', 'assistant', 'confirmation', 'agent']),
          host.record(conversationId),
        ]);
        const pending = record?.pendingConfirmation;
        const entries = toWidgetHistory(records);
        const ready: Record<string, unknown> = { type: 'ready', customerId: found.customerId, conversationId, history: entries };
        if (record?.handoff) ready.status = record.handoff.agent ? { mode: 'human', agent: record.handoff.agent } : { mode: 'human' };
        sendFrame(socket, ready);
        // A reply being written: the text so far, then its deltas and its final message like every open widget.
        const writing = sessions.writing(found.customerId);
        const caughtUp = writing && !entries.some((e) => e.id === writing.id) ? writing.id : undefined;
        if (writing && caughtUp) sendFrame(socket, { type: 'delta', id: writing.id, text: writing.text, reset: true });
        if (pending) sendFrame(socket, { type: 'confirm', ...pending });
        // Held frames the ready history or the catch-up already carries are not sent again.
        const inReady = new Set(entries.map((e) => e.id));
        sessions.release(socket, (frame) => (frame.type === 'message' && inReady.has(frame.id as string)) || (frame.type === 'delta' && frame.id === caughtUp));
      };

      const onMessage = async (frame: Extract<WidgetClientFrame, { type: 'message' }>) => {
        if (!customer) return error('not_initialized', 'Send init first');
        const allowed = limiter.take(customer.customerId);
        if (!allowed.ok) return error('rate_limited', `Too many messages; try again in ${Math.ceil(allowed.retryAfterMs / 1000)} s`);
        // Sent once: by the web sink with the write that stores the message (ahead of any reply in that write), or
        // here once it is known durable (a copy already stored, one handed to the owner node's inbox).
        let answered = false;
        const ack = () => {
          if (answered) return;
          answered = true;
          sendFrame(socket, { type: 'ack', id: frame.id });
        };
        try {
          await withinDeadline(host.receive(customer, 'web', { messageId: frame.id, text: frame.text }, ack));
          ack();
        } catch (err) {
          if (answered) return;
          answered = true;
          if (!isStoreUnavailable(err)) log.error({ err }, 'message not stored');
          error('unavailable', 'Your message could not be stored; please send it again');
        }
      };

      const onConfirm = async (frame: Extract<WidgetClientFrame, { type: 'confirm' }>) => {
        if (!customer) return error('not_initialized', 'Send init first');
        try {
          const ok = await host.confirm(conversationId, frame.id, frame.approve);
          if (!ok) error('unknown_confirmation', 'Nothing is waiting for this confirmation');
        } catch (err) {
          log.error({ err }, 'confirmation not stored');
          error('unavailable', 'Your answer could not be stored; please try again');
        }
      };

      socket.on('message', (data, isBinary) => {
        const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
        if (size > WIDGET_MAX_FRAME_BYTES) return socket.close(1009, 'frame too large');
        if (isBinary) return error('bad_frame', 'Frames are JSON text');
        let json: unknown;
        try {
          json = JSON.parse(data.toString());
        } catch {
          return error('bad_frame', 'Frame is not valid JSON');
        }
        if (jsonDepth(json, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return error('bad_frame', `Frame nested deeper than ${MAX_JSON_DEPTH} levels`);
        const parsed = WidgetClientFrame.safeParse(json);
        if (!parsed.success) {
          return error('bad_frame', parsed.error.issues.map((i) => `${i.path.join('.') || 'frame'}: ${i.message}`).join('; '));
        }
        const frame = parsed.data;
        const work = frame.type === 'init' ? init(frame) : frame.type === 'message' ? onMessage(frame) : onConfirm(frame);
        work.catch((err) => {
          log.error({ err }, 'widget frame failed');
          error('internal', 'Something went wrong');
        });
      });
      socket.on('close', () => {
        clock.clearTimeout(initTimer);
        if (customer) sessions.remove(customer.customerId, socket);
      });
      socket.on('error', (err) => log.debug({ err }, 'widget socket error'));
    },
  });
}
