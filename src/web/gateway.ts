// GET /widget/ws — the widget protocol (sdk/src/widget-protocol.ts).
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { WidgetClientFrame, WIDGET_MAX_FRAME_BYTES, WIDGET_MAX_MESSAGE_CHARS, type WidgetReadyFrame } from '../../sdk/src/widget-protocol.ts';
import type { WidgetFrameErrorCode } from '../../sdk/src/error-codes.ts';
import type { SignedIn, WidgetSignIn } from '../identity/widget-sign-in.ts';
import type { ConversationHost } from '../conversations/host.ts';
import { conversationIdFor } from '../conversations/history.ts';
import type { HistoryStore } from '../store/repos.ts';
import { sendError } from '../http/errors.ts';
import { jsonDepth, MAX_JSON_DEPTH, textFaultAt } from '../http/json-body.ts';
import { createRateLimiter } from '../limits/rate-limiter.ts';
import type { Services } from '../services.ts';
import { sendFrame, type WebSessions } from './sessions.ts';
import { withinDeadline } from '../store/deadline.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import { toWidgetHandoffs, toWidgetHistory } from './history.ts';
import type { WidgetHandoffNoticeFrame } from '../../sdk/src/widget-protocol.ts';
import type { HandoffInfo } from '../store/model.ts';
import type { StoreRepos } from '../store/repos.ts';
import { saveContact } from './contact.ts';
import { askForPerson } from './person.ts';
import { releaseUpgradeRequest } from '../http/websocket-scope.ts';

export interface WidgetGatewayOptions {
  services: Services;
  history: HistoryStore;
  host: ConversationHost;
  sessions: WebSessions;
  signIn: WidgetSignIn;
  /** Where a `contact` frame's address is stored (CustomerStore.setContact). */
  customers: Pick<StoreRepos, 'customers'>;
  /** What a widget (re)connecting while its conversation waits for a person is told (src/handoff/web-notices.ts). */
  handoffNotice?: (handoff: HandoffInfo | undefined, customerId: string) => Promise<WidgetHandoffNoticeFrame | undefined>;
  /** The customer's feedback (docs/outcomes.md): absent, `resolution` and `rating` frames are refused. */
  feedback?: WidgetFeedback;
}

/** What the widget's feedback frames need of the outcomes (src/outcomes/, wired in). */
export interface WidgetFeedback {
  /** For `ready`: whether to ask "Did that answer your question?" and whether a rating is asked now. */
  offer(conversationId: string): Promise<{ resolution: boolean; rating: boolean }>;
  /** False: the conversation has nothing to answer or rate yet. */
  answer(conversationId: string, yes: boolean): Promise<boolean>;
  rate(conversationId: string, rating: { score: number; comment?: string }): Promise<boolean>;
}

const INIT_TIMEOUT_MS = 10_000;
/** Stored records read for `ready` (messages, confirmations and handoffs). */
const HISTORY_ON_READY = 150;

export function originAllowed(origin: string | undefined, allowed: string[]): boolean {
  if (!origin) return true; // not a browser: the session token still decides
  if (allowed.includes('*')) return true;
  return allowed.some((a) => a.replace(/\/$/, '').toLowerCase() === origin.replace(/\/$/, '').toLowerCase());
}

/** A `message` frame the schema refused: its client id (when it has a usable one), and whether its text is too long. */
function refusedMessage(json: unknown): { id: string; tooLong: boolean } | undefined {
  if (!json || typeof json !== 'object') return undefined;
  const f = json as { type?: unknown; id?: unknown; text?: unknown };
  if (f.type !== 'message' || typeof f.id !== 'string' || f.id.length === 0 || f.id.length > 128) return undefined;
  return { id: f.id, tooLong: typeof f.text === 'string' && f.text.length > WIDGET_MAX_MESSAGE_CHARS };
}

export async function widgetGatewayPlugin(app: FastifyInstance, o: WidgetGatewayOptions) {
  const { services, history, host, sessions } = o;
  const { clock, config, logger } = services;
  const limiter = createRateLimiter({
    perMinute: config.channels.web.rate_limit_per_minute,
    burst: Math.max(5, Math.ceil(config.channels.web.rate_limit_per_minute / 3)),
    now: clock.now,
  });
  // Visitors have not signed in: their messages are limited per visitor and per client address as well.
  const perVisitor = createRateLimiter({ perMinute: config.identity.visitor_messages_per_minute, now: clock.now });
  const perVisitorIp = createRateLimiter({ perMinute: config.identity.visitor_messages_per_ip_per_minute, now: clock.now });
  const log = logger.child({ component: 'widget' });
  const socketLog = logger.child({ component: 'websocket' });

  const visitorAllowance = (customerId: string, ip: string) => {
    const mine = perVisitor.take(customerId);
    const theirs = perVisitorIp.take(ip);
    return !mine.ok ? mine : theirs;
  };

  const onRequest = async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
    if (!config.channels.web.enabled) return sendError(reply, 'not_found', 'The web channel is disabled');
    if (!originAllowed(request.headers.origin, config.channels.web.allowed_origins)) {
      return sendError(reply, 'forbidden_origin', 'This origin may not open the widget');
    }
  };

  // A plain GET (no upgrade) gets a 426 error body; @fastify/websocket's default is an empty 404.
  app.route({
    method: 'GET',
    url: '/widget/ws',
    onRequest,
    handler: (_request, reply) =>
      sendError(reply.header('upgrade', 'websocket'), 'upgrade_required', 'This is a WebSocket endpoint: connect with a WebSocket upgrade'),
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      // A socket open for hours must not keep its upgrade request alive (websocket-scope.ts): the address is read once.
      releaseUpgradeRequest(socket, request, socketLog);
      const ip = request.ip;
      let customer: SignedIn | undefined;
      let visitor = false;
      let initializing = false;
      let conversationId = '';
      /** `id`: the customer message refused (the widget marks it not sent); `retryAfterMs` for `rate_limited`. */
      const error = (code: WidgetFrameErrorCode, message: string, refused?: { id?: string; retryAfterMs?: number }) =>
        sendFrame(socket, { type: 'error', code, message, ...refused });
      /** A frame no client of ours sends (bad bytes): answered, and logged without a stack at debug. */
      const clientFault = (message: string) => {
        log.debug({ reason: message }, 'widget frame refused');
        error('bad_frame', message);
      };
      // For a client that never sends init. An init being handled is bounded by the store's deadline instead, so a
      // slow store answers `unavailable` rather than `init_timeout`; a failed init starts the wait again.
      const armInitTimer = () =>
        clock.setTimeout(() => {
          if (!customer) {
            error('init_timeout', 'Send init first');
            socket.close(4008, 'init timeout');
          }
        }, INIT_TIMEOUT_MS);
      let initTimer = armInitTimer();

      const refuse = (code: WidgetFrameErrorCode, message: string) => {
        error(code, message);
        socket.close(code === 'rate_limited' ? 4029 : 4001, code);
      };

      const init = async (frame: Extract<WidgetClientFrame, { type: 'init' }>) => {
        if (customer || initializing) return error('already_initialized', 'init was already accepted on this connection');
        clock.clearTimeout(initTimer);
        initializing = true;
        let signedIn: Awaited<ReturnType<typeof o.signIn.signIn>>;
        try {
          signedIn = await withinDeadline(o.signIn.signIn(frame, ip));
        } catch (err) {
          initTimer = armInitTimer();
          throw err;
        } finally {
          initializing = false;
        }
        if (!signedIn.ok) return refuse(signedIn.code, signedIn.message);
        const found = signedIn.customer;
        customer = found;
        visitor = signedIn.visitor;
        conversationId = conversationIdFor(found.customerId, 'web');
        // Added before the history is read (nothing committed in between is missed), held until `ready` is out.
        sessions.add(found.customerId, socket, { hold: true });
        const [records, record, feedback] = await Promise.all([
          history.recent(conversationId, HISTORY_ON_READY, ['user', 'assistant', 'confirmation', 'agent', 'handoff']),
          host.record(conversationId),
          o.feedback?.offer(conversationId),
        ]);
        const pending = record?.pendingConfirmation;
        const entries = toWidgetHistory(records);
        const ready: WidgetReadyFrame = { type: 'ready', customerId: found.customerId, conversationId, history: entries };
        const handoffs = toWidgetHandoffs(records, entries);
        if (handoffs.length) ready.handoffs = handoffs;
        if (signedIn.visitorToken) ready.visitorToken = signedIn.visitorToken;
        if (feedback) ready.feedback = Object.assign({}, feedback, { handoff: config.handoff.enabled });
        if (record?.handoff) ready.status = record.handoff.agent ? { mode: 'human', agent: { name: record.handoff.agent.name } } : { mode: 'human' };
        const notice = record?.handoff && !record.handoff.agent ? await o.handoffNotice?.(record.handoff, found.customerId).catch(() => undefined) : undefined;
        sendFrame(socket, ready);
        if (notice) sendFrame(socket, notice);
        // A reply being written: the text so far, then its deltas and its final message like every open widget.
        const writing = sessions.writing(found.customerId);
        const caughtUp = writing && !entries.some((e) => e.id === writing.id) ? writing.id : undefined;
        if (writing && caughtUp) sendFrame(socket, { type: 'delta', id: writing.id, text: writing.text, reset: true });
        if (pending) sendFrame(socket, { type: 'confirm', ...pending });
        // Held frames the ready history or the catch-up already carries are not sent again.
        const inReady = new Set(entries.map((e) => e.id));
        for (const h of handoffs) inReady.add(h.id);
        sessions.release(
          socket,
          (frame) =>
            ((frame.type === 'message' || frame.type === 'status') && inReady.has(frame.id as string)) || (frame.type === 'delta' && frame.id === caughtUp),
        );
      };

      const onMessage = async (frame: Extract<WidgetClientFrame, { type: 'message' }>) => {
        if (!customer) return error('not_initialized', 'Send init first', { id: frame.id });
        const allowed = visitor ? visitorAllowance(customer.customerId, ip) : limiter.take(customer.customerId);
        if (!allowed.ok) {
          const { retryAfterMs } = allowed;
          return error('rate_limited', `Too many messages; try again in ${Math.ceil(retryAfterMs / 1000)} s`, { id: frame.id, retryAfterMs });
        }
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
          error('unavailable', 'Your message could not be stored; please send it again', { id: frame.id });
        }
      };

      const onConfirm = async (frame: Extract<WidgetClientFrame, { type: 'confirm' }>) => {
        if (!customer) return error('not_initialized', 'Send init first');
        try {
          const ok = await host.confirm(conversationId, frame.id, frame.approve);
          if (!ok) error('unknown_confirmation', 'Nothing is waiting for this confirmation');
        } catch (err) {
          if (!isStoreUnavailable(err)) log.error({ err }, 'confirmation not stored');
          error('unavailable', 'Your answer could not be stored; please try again');
        }
      };

      const onContact = async (frame: Extract<WidgetClientFrame, { type: 'contact' }>) => {
        if (!customer) return error('not_initialized', 'Send init first', { id: frame.id });
        const allowed = limiter.take(customer.customerId);
        if (!allowed.ok) return error('rate_limited', 'Too many requests; try again shortly', { id: frame.id, retryAfterMs: allowed.retryAfterMs });
        const saved = await saveContact({ store: o.customers, sessions, now: clock.now }, customer.customerId, frame);
        if (!saved.ok) error(saved.code, saved.message, { id: frame.id });
      };

      const onFeedback = async (frame: Extract<WidgetClientFrame, { type: 'resolution' | 'rating' }>) => {
        if (!customer) return error('not_initialized', 'Send init first');
        if (!o.feedback) return error('not_enabled', 'Outcomes are not kept here');
        const stored =
          frame.type === 'resolution'
            ? await o.feedback.answer(conversationId, frame.answer === 'yes')
            : await o.feedback.rate(conversationId, frame.comment === undefined ? { score: frame.score } : { score: frame.score, comment: frame.comment });
        if (!stored) return error('nothing_to_rate', 'This conversation has no answer to rate yet');
        sendFrame(socket, { type: 'noted', of: frame.type });
      };

      const onHandoff = async () => {
        if (!customer) return error('not_initialized', 'Send init first');
        const allowed = limiter.take(customer.customerId);
        if (!allowed.ok) return error('rate_limited', 'Too many requests; try again shortly', { retryAfterMs: allowed.retryAfterMs });
        const r = await askForPerson({ host: o.host, enabled: config.handoff.enabled }, conversationId);
        if (!r.ok) error(r.code, r.message);
      };

      socket.on('message', (data, isBinary) => {
        const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
        if (size > WIDGET_MAX_FRAME_BYTES) return socket.close(1009, 'frame too large');
        if (isBinary) return error('bad_frame', 'Frames are JSON text');
        // ws does not check UTF-8 (skipUTF8Validation, websocket-scope.ts): it would close the socket without a word.
        const text = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
        if (!isUtf8(text)) return clientFault('Frame is not valid UTF-8 text');
        let json: unknown;
        try {
          json = JSON.parse(text.toString());
        } catch {
          return error('bad_frame', 'Frame is not valid JSON');
        }
        if (jsonDepth(json, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return error('bad_frame', `Frame nested deeper than ${MAX_JSON_DEPTH} levels`);
        // Lone surrogates would be acknowledged and then stored changed (UTF-8 cannot hold them), a NUL not stored at all
        // on PostgreSQL: refused before the ack.
        const textFault = textFaultAt(json);
        if (textFault !== undefined) return clientFault(textFault);
        const parsed = WidgetClientFrame.safeParse(json);
        if (!parsed.success) {
          const refused = refusedMessage(json);
          if (refused?.tooLong) return error('too_long', `A message is at most ${WIDGET_MAX_MESSAGE_CHARS} characters`, { id: refused.id });
          const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'frame'}: ${i.message}`).join('; ');
          return error('bad_frame', detail, refused && { id: refused.id });
        }
        const frame = parsed.data;
        const work =
          frame.type === 'init'
            ? init(frame)
            : frame.type === 'message'
              ? onMessage(frame)
              : frame.type === 'contact'
                ? onContact(frame)
                : frame.type === 'confirm'
                  ? onConfirm(frame)
                  : frame.type === 'handoff'
                    ? onHandoff()
                    : onFeedback(frame);
        work.catch((err) => {
          // A store that cannot write (a full disk, PostgreSQL away) is the environment, not a bug: no stack.
          if (isStoreUnavailable(err)) {
            log.warn({ code: err.code, frame: frame.type }, 'widget frame not handled: the store cannot write');
            return error('unavailable', 'Parley cannot store this now; please try again shortly', frame.type === 'message' ? { id: frame.id } : undefined);
          }
          log.error({ err }, 'widget frame failed');
          error('internal', 'Something went wrong', frame.type === 'message' ? { id: frame.id } : undefined);
        });
      });
      socket.on('close', () => {
        clock.clearTimeout(initTimer);
        if (customer) sessions.remove(customer.customerId, socket);
      });
      // A connection lost or a client breaking the protocol: noise any client can cause, so no stack.
      socket.on('error', (err: NodeJS.ErrnoException) => log.debug({ code: err.code, reason: err.message }, 'widget socket error'));
    },
  });
}
