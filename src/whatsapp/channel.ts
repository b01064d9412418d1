// The WhatsApp channel: the webhook (challenge + signed POSTs), durable
// inbound and outbound queues, the sender (Graph API, SDK `onSend`, or the
// test-mode mock), delivery statuses, and confirmations as Yes/No buttons.
//
// Inbound: signature checked over the raw bytes → parsed → de-duplicated by
// WhatsApp message id and queued in ONE LMDB transaction → 200. A worker then
// resolves the customer by phone and hands the message to the conversation.
// Outbound: a reply is queued in the same transaction that stores it
// (see ConversationHost), then sent with retries; 4xx are dead-lettered.
// Several business numbers: a message that reached any of them is answered
// from the number the customer last wrote to (`other_numbers: answer`).
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { DEFAULT_GRAPH_URL } from '../config/schema.ts';
import type { ConversationOutput } from '../../machines/conversation.ts';
import type { ChannelSink, ConversationHost, ConversationMeta } from '../conversations/host.ts';
import { conversationIdFor } from '../conversations/history.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import { insideWhatsAppWindow } from '../customers/whatsapp-window.ts';
import { answeredCancelledPress } from './cancelled.ts';
import { handoffText, HANDOFF_TEXTS } from '../handoff/texts.ts';
import type { HandoffOutlook } from '../handoff/outlook.ts';
import { safeEqual } from '../http/auth.ts';
import { HttpError, sendError } from '../http/errors.ts';
import { jsonDepth, MAX_JSON_DEPTH } from '../http/json-body.ts';
import sjson from 'secure-json-parse';
import { createJobQueue, type Job, type JobQueue } from '../jobs/queue.ts';
import type { WhatsAppOutbound } from '../proactive/ports.ts';
import type { SdkHub, Services } from '../services.ts';
import { createGraphClient } from './graph-client.ts';
import { createMockSender, createOutbox, type Outbox } from './mock-sender.ts';
import { advanceStatus, pricingData } from './delivery-status.ts';
import { backoffDelay, type OutboundWhatsApp, type WhatsAppSender } from './outbound.ts';
import { createSdkSender } from './sdk-sender.ts';
import { verifySignature } from './signature.ts';
import { withinDeadline } from '../store/deadline.ts';
import { parseWhatsAppUser, whatsappAddress } from './user-id.ts';
import {
  parseWebhook,
  WebhookPayloadError,
  type InboundIdentityEvent,
  type InboundMessage,
  type InboundWhatsApp,
  type WhatsAppStatus,
} from './webhook-payload.ts';
import { reportWebhookParts } from './webhook-report.ts';
import type { Customer, WhatsAppIdentity } from '../customers/repo.ts';
import type { DeliveryRecord } from '../store/model.ts';
import type { StoreRepos } from '../store/repos.ts';
import { toWhatsAppText } from './format.ts';

export interface OutboundJob {
  message: OutboundWhatsApp;
  customerId: string;
  conversationId?: string;
  /** The reply or proactive message id this job delivers. */
  sourceId: string;
  proactive?: boolean;
}

/** One short text for each change of who answers (human handoff): src/handoff/texts.ts. */
export { HANDOFF_TEXTS };

/** The outbound job's source id: reply, confirmation and agent message ids are unique; a handoff's only in its conversation. */
const sourceIdOf = (meta: ConversationMeta, o: ConversationOutput): string | undefined => {
  if (o.type === 'reply' || o.type === 'confirm' || o.type === 'agent') return o.id;
  if (o.type === 'handoff' && o.phase !== 'joined') return `${meta.conversationId}:${o.id}`;
  return undefined;
};

const CONFIRM_REPLY = /^confirm:(.+):(yes|no)$/;
const YES = /^\s*(yes|y|yeah|yep|ok|okay|approve|confirm|sí|si)\s*[.!]*\s*$/i;
const NO = /^\s*(no|n|nope|decline|cancel|stop)\s*[.!]*\s*$/i;

/** A button reply for this confirmation, or a typed yes/no while one is pending. */
export function confirmationAnswer(m: Pick<InboundMessage, 'text' | 'replyId'>, pendingId: string): boolean | undefined {
  const button = m.replyId ? CONFIRM_REPLY.exec(m.replyId) : null;
  if (button) return button[1] === pendingId ? button[2] === 'yes' : undefined;
  if (YES.test(m.text)) return true;
  if (NO.test(m.text)) return false;
  return undefined;
}

/** Who sent an inbound message; a job queued before BSUIDs carries only `from`, a phone. */
const senderIds = (m: InboundMessage): WhatsAppIdentity => {
  if (!m.phone && !m.bsuid) return { phone: m.from };
  const ids: WhatsAppIdentity = {};
  if (m.phone) ids.phone = m.phone;
  if (m.bsuid) ids.bsuid = m.bsuid;
  return ids;
};

export interface WhatsAppChannel {
  sink: ChannelSink;
  outbound: WhatsAppOutbound;
  inbound: JobQueue<InboundWhatsApp>;
  outboundQueue: JobQueue<OutboundJob>;
  plugin: (app: FastifyInstance) => Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  prune(): Promise<number>;
  diagnostics(): Promise<Record<string, unknown>>;
}

export function checkWhatsAppConfig(services: Services): void {
  const wa = services.config.channels.whatsapp;
  if (!wa.enabled || wa.provider !== 'meta') return;
  const needed: [keyof typeof wa, string][] = [
    ['verify_token', 'WA_VERIFY_TOKEN'],
    ['app_secret', 'WA_APP_SECRET'],
    ...(services.testMode
      ? []
      : ([
          ['phone_id', 'WA_PHONE_ID'],
          ['token', 'WA_TOKEN'],
        ] as [keyof typeof wa, string][])),
  ];
  const missing = needed.filter(([k]) => !wa[k]);
  if (missing.length) {
    throw new Error(
      `channels.whatsapp: provider "meta" is enabled but ${missing.map(([k, env]) => `${k} (${env})`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set`,
    );
  }
}

export function createWhatsAppChannel(deps: {
  services: Services;
  customers: CustomerRepo;
  hub: SdkHub;
  host: () => ConversationHost;
  outbox: Outbox;
  /** What a customer waiting for a person is told (business hours, the usual wait). */
  outlook?: Pick<HandoffOutlook, 'atHandoff'>;
}): WhatsAppChannel {
  const { services, customers, hub } = deps;
  const { store, clock, config, telemetry, logger } = services;
  const wa = config.channels.whatsapp;
  checkWhatsAppConfig(services);
  const log = logger.child({ component: 'whatsapp' });
  const retentionMs = wa.retention_days * 24 * 3600_000;
  // De-dup of inbound ids lives in the inbound queue's kept ids (after the job is done); the store's WhatsApp
  // bookkeeping holds messages answered by a confirmation (see the sink), sends in flight and accepted, deliveries.
  const book = store.whatsapp;

  const sender: WhatsAppSender = (() => {
    if (wa.provider === 'sdk') return createSdkSender(hub, wa.send_timeout_ms);
    // Test mode never reaches Meta: only a graph_url pointed elsewhere (a local fake) is really called.
    if (services.testMode && (!wa.phone_id || !wa.token || wa.graph_url === DEFAULT_GRAPH_URL)) return createMockSender(deps.outbox);
    const graph = createGraphClient({ graphUrl: wa.graph_url, phoneId: wa.phone_id, token: wa.token, timeoutMs: wa.send_timeout_ms });
    if (!services.testMode) return graph;
    // In test mode every delivered message is also visible in the outbox.
    return {
      name: graph.name,
      async send(m) {
        const r = await graph.send(m);
        if (r.ok) deps.outbox.record(m, r.providerMessageId);
        return r;
      },
    };
  })();

  // Send markers this process failed to write, by job id → the marker's `startedAt`: no request went out under them.
  // A database may still commit such a write (its answer was lost); the next run must not take it for an unanswered
  // send and wait out the grace. In memory only: after a restart nobody knows, and the grace applies.
  const unsentMarkers = new Map<string, number>();

  const outboundQueue = createJobQueue<OutboundJob>({
    store,
    clock,
    logger,
    name: 'wa-outbound',
    orderingKey: (p) => p.message.to,
    leaseMs: wa.lease_ms,
    maxAttempts: wa.max_send_attempts,
    concurrency: 16,
    onDeadLetter: (job) =>
      telemetry.event({
        type: 'whatsapp.dead_letter',
        customerId: job.payload.customerId,
        conversationId: job.payload.conversationId,
        channel: 'whatsapp',
        data: { jobId: job.id, attempts: job.attempts, error: job.error },
      }),
    keepDoneIds: true,
    handler: async (job) => {
      const p = job.payload;
      const base = { customerId: p.customerId, conversationId: p.conversationId, channel: 'whatsapp' as const };
      // Exactly once: a send is marked before the request goes out. If its answer never came (a crash,
      // a timeout, a reset connection) it is not resent at once: Meta echoes the job id in its status
      // webhook, which marks the job sent; only when no status came within the grace period was the
      // message not accepted, and it goes again.
      const done = await book.sent(job.id);
      if (done) {
        if (!(await book.delivery(done.providerMessageId))) {
          await store.transaction((tx) => recordDelivery(tx, job, done.providerMessageId, done.at));
          telemetry.event({
            type: 'whatsapp.outbound',
            data: {
              status: 'accepted',
              providerMessageId: done.providerMessageId,
              kind: p.message.kind,
              sender: sender.name,
              resolvedBy: 'status',
              proactive: p.proactive ?? false,
            },
            ...base,
          });
        }
        return 'done';
      }
      const stored = await book.sendAttempt(job.id);
      // A marker whose write failed before the request went out (its commit landed after all) hides no send.
      const attempt = stored && unsentMarkers.get(job.id) === stored.startedAt ? undefined : stored;
      const now = clock.now();
      if (attempt && now < attempt.startedAt + wa.uncertain_grace_ms)
        return { waitUntil: attempt.startedAt + wa.uncertain_grace_ms, reason: 'waiting for a status of an unanswered send' };
      if (sender.ready && !sender.ready()) {
        // Waiting for a sender uses no attempts; registering one expedites the queue.
        const deadline = job.enqueuedAt + wa.sdk_wait_ms;
        if (now >= deadline) return { fail: `no SDK with onSend connected within sdk_wait_ms (${wa.sdk_wait_ms} ms)` };
        return { waitUntil: deadline, reason: 'waiting for an SDK with onSend' };
      }
      if (attempt) {
        log.debug({ jobId: job.id, startedAt: attempt.startedAt }, 'resending an unanswered send');
        telemetry.event({
          type: 'whatsapp.outbound',
          data: { status: 'resending', reason: 'no status arrived for an unanswered send', jobId: job.id },
          ...base,
        });
      }
      try {
        await book.putSendAttempt(job.id, { startedAt: now });
      } catch (err) {
        unsentMarkers.set(job.id, now);
        throw err;
      }
      unsentMarkers.delete(job.id);
      const result = await sender.send(Object.assign({}, p.message, { callbackData: job.id }));
      if (result.ok) {
        const at = clock.now();
        await store.transaction(async (tx) => {
          await tx.whatsapp.putSent(job.id, { providerMessageId: result.providerMessageId, at });
          await tx.whatsapp.removeSendAttempt(job.id);
          await recordDelivery(tx, job, result.providerMessageId, at);
        });
        telemetry.event({
          type: 'whatsapp.outbound',
          data: {
            status: 'accepted',
            providerMessageId: result.providerMessageId,
            kind: p.message.kind,
            sender: sender.name,
            attempts: job.attempts + 1,
            proactive: p.proactive ?? false,
          },
          ...base,
        });
        return 'done';
      }
      if (result.uncertain) {
        // Its status may already have come in while the request hung.
        const confirmed = await book.sent(job.id);
        if (confirmed) {
          await store.transaction(async (tx) => {
            await tx.whatsapp.removeSendAttempt(job.id);
            await recordDelivery(tx, job, confirmed.providerMessageId, confirmed.at);
          });
          telemetry.event({
            type: 'whatsapp.outbound',
            data: {
              status: 'accepted',
              providerMessageId: confirmed.providerMessageId,
              kind: p.message.kind,
              sender: sender.name,
              resolvedBy: 'status',
              proactive: p.proactive ?? false,
            },
            ...base,
          });
          return 'done';
        }
        // The marker stays: the next run waits for a status until the grace period is over.
        telemetry.event({
          type: 'whatsapp.outbound',
          data: { status: 'uncertain', code: result.code, message: result.message, attempt: job.attempts + 1, jobId: job.id },
          ...base,
        });
        return { retryAt: now + wa.uncertain_grace_ms, error: `${result.message} (waiting for a status before resending)` };
      }
      await book.removeSendAttempt(job.id);
      telemetry.event({
        type: 'whatsapp.outbound',
        data: {
          status: result.retryable ? 'retrying' : 'failed',
          httpStatus: result.status,
          code: result.code,
          message: result.message,
          attempt: job.attempts + 1,
        },
        ...base,
      });
      if (result.retryable) return { retryAt: clock.now() + backoffDelay(job.attempts, result.retryAfterMs), error: result.message };
      return { fail: `${result.code ?? result.status ?? 'error'}: ${result.message}` };
    },
  });

  /** In a transaction: the delivery record of an accepted send, with any status that arrived before it. */
  async function recordDelivery(tx: StoreRepos, job: Job<OutboundJob>, providerMessageId: string, at: number) {
    const p = job.payload;
    const early = await tx.whatsapp.earlyStatus(providerMessageId);
    if (early) await tx.whatsapp.removeEarlyStatus(providerMessageId);
    await tx.whatsapp.putDelivery({
      providerMessageId,
      jobId: job.id,
      sourceId: p.sourceId,
      customerId: p.customerId,
      conversationId: p.conversationId,
      to: p.message.to,
      status: advanceStatus('sent', early?.status ?? 'sent'),
      sentAt: at,
      updatedAt: early ? Math.max(at, early.at) : at,
      ...(early?.errors?.length ? { errors: early.errors } : {}),
    });
  }

  const inbound = createJobQueue<InboundWhatsApp>({
    store,
    clock,
    logger,
    name: 'wa-inbound',
    orderingKey: (m) => m.from,
    leaseMs: wa.lease_ms,
    maxAttempts: 10,
    concurrency: 16,
    keepDoneIds: true,
    handler: async (job) => {
      const m = job.payload;
      if (m.kind === 'identity') {
        await applyIdentityEvent(m);
        return 'done';
      }
      // Answered a confirmation in a run whose completion was not recorded (crash): not a new message.
      if (await book.handled(m.waMessageId)) return 'done';
      const customer = await customers.resolveWhatsApp(senderIds(m));
      // The 24-hour window opens when the customer wrote (Meta's timestamp), not when we got to it.
      const now = clock.now();
      await customers.touchInbound(customer.customerId, 'whatsapp', m.timestampMs > 0 ? Math.min(m.timestampMs, now) : now, businessNumberOf(m));
      const host = deps.host();
      const conversationId = conversationIdFor(customer.customerId, 'whatsapp');
      const pending = await host.pendingConfirmation(conversationId);
      if (pending) {
        const answer = confirmationAnswer(m, pending.id);
        if (answer !== undefined) {
          // The sink marks this message handled in the transaction that stores the confirmation.
          confirming.set(conversationId, m.waMessageId);
          try {
            if (await host.confirm(conversationId, pending.id, answer)) return 'done';
          } finally {
            confirming.delete(conversationId);
          }
        }
      }
      const press = { replyId: m.replyId, waMessageId: m.waMessageId, customer, conversationId };
      if (await answeredCancelledPress({ store, outboundQueue, fromNumberFor }, press)) return 'done';
      await host.receive(customer, 'whatsapp', { messageId: `wa:${m.waMessageId}`, text: m.text, content: m.content });
      return 'done';
    },
  });

  /** The business number a webhook message reached, when replies may go out from it (SDK ingest has none). */
  const businessNumberOf = (m: InboundMessage): string | undefined =>
    wa.provider === 'meta' && wa.other_numbers === 'answer' && m.phoneNumberId ? m.phoneNumberId : undefined;

  /** Where a message to this customer goes out from: the number they last wrote to; unset means phone_id. */
  const fromNumberFor = (c: Customer | undefined): { fromNumberId?: string } =>
    wa.provider === 'meta' && wa.other_numbers === 'answer' && c?.businessNumberId ? { fromNumberId: c.businessNumberId } : {};

  /** A number or BSUID change: linked to the same customer (and history); never a turn. */
  const applyIdentityEvent = async (e: InboundIdentityEvent) => {
    const r = await customers.changeWhatsAppIdentity(e.previous, e.next);
    log.info(
      { waMessageId: e.waMessageId, systemType: e.systemType, changed: r.changed, reason: r.changed ? undefined : r.reason },
      'WhatsApp identity change',
    );
    telemetry.event({
      type: 'whatsapp.identity',
      channel: 'whatsapp',
      customerId: r.customer?.customerId,
      customerExternalId: r.customer?.externalId,
      data: { waMessageId: e.waMessageId, systemType: e.systemType, changed: r.changed, ...(r.changed ? {} : { reason: r.reason }) },
    });
  };

  // Jobs prepared inside the conversation's transaction, made runnable once it commits.
  const prepared = new Map<string, Job<OutboundJob> | undefined>();
  // Conversation id → the WhatsApp message id answering its pending confirmation right now.
  const confirming = new Map<string, string>();
  // Handoff notices not sent because the 24 h window is closed: recorded once their conversation's write commits.
  const skippedNotices = new Set<string>();

  const messageFor = async (tx: StoreRepos, meta: ConversationMeta, o: ConversationOutput): Promise<OutboundWhatsApp | undefined> => {
    const c = await tx.customers.get(meta.customerId);
    const phone = c && whatsappAddress(c);
    if (!phone) return undefined;
    // Replies are written in Markdown (for the widget): WhatsApp gets its own formatting.
    if (o.type === 'reply' || o.type === 'agent') return Object.assign({ kind: 'text' as const, to: phone, text: toWhatsAppText(o.text) }, fromNumberFor(c));
    if (o.type === 'handoff' && o.phase !== 'joined') {
      const text = await handoffText(o, deps.outlook?.atHandoff ?? (async () => ({ kind: 'open' as const })));
      return text === undefined ? undefined : Object.assign({ kind: 'text' as const, to: phone, text }, fromNumberFor(c));
    }
    if (o.type === 'confirm') {
      const buttons: OutboundWhatsApp = {
        kind: 'buttons',
        to: phone,
        text: `${o.summary}?`,
        buttons: [
          { id: `confirm:${o.id}:yes`, title: 'Yes' },
          { id: `confirm:${o.id}:no`, title: 'No' },
        ],
      };
      return Object.assign(buttons, fromNumberFor(c));
    }
    return undefined;
  };

  const sink: ChannelSink = {
    async write(tx, meta, o) {
      if (o.type === 'confirmation') {
        const waMessageId = confirming.get(meta.conversationId);
        if (waMessageId) await tx.whatsapp.markHandled(waMessageId, clock.now());
        return;
      }
      const sourceId = sourceIdOf(meta, o);
      if (sourceId === undefined) return;
      // Parley's own notices are free-form text: like an agent's message, only inside the customer's 24 h window.
      if (o.type === 'handoff' && !insideWhatsAppWindow(await tx.customers.get(meta.customerId), clock.now())) {
        skippedNotices.add(sourceId);
        return;
      }
      const message = await messageFor(tx, meta, o);
      if (!message) {
        log.warn({ conversationId: meta.conversationId }, 'no phone number or BSUID for a WhatsApp reply');
        return;
      }
      prepared.set(
        sourceId,
        await outboundQueue.prepare(tx, { message, customerId: meta.customerId, conversationId: meta.conversationId, sourceId }, { id: `out:${sourceId}` }),
      );
    },
    deliver(meta, o) {
      const sourceId = sourceIdOf(meta, o);
      if (sourceId === undefined) return;
      if (o.type === 'handoff' && skippedNotices.delete(sourceId)) {
        const { conversationId, customerId } = meta;
        log.info({ conversationId, phase: o.phase }, "a handoff notice was not sent: the customer's 24 h WhatsApp window is closed");
        telemetry.event({
          type: 'whatsapp.notice_skipped',
          conversationId,
          customerId,
          channel: 'whatsapp',
          data: { notice: o.phase, reason: 'outside_window' },
        });
        return;
      }
      const job = prepared.get(sourceId);
      prepared.delete(sourceId);
      outboundQueue.accept([job]);
    },
  };

  const outbound: WhatsAppOutbound = {
    async prepareProactive(tx, { messageId, customerId, to, text, template }) {
      const from = fromNumberFor(await tx.customers.get(customerId));
      const message: OutboundWhatsApp = Object.assign(
        template ? { kind: 'template' as const, to, template } : { kind: 'text' as const, to, text: toWhatsAppText(text) },
        from,
      );
      const job = await outboundQueue.prepare(
        tx,
        { message, customerId, conversationId: conversationIdFor(customerId, 'whatsapp'), sourceId: messageId, proactive: true },
        { id: `out:${messageId}` },
      );
      return () => outboundQueue.accept([job]);
    },
  };

  /** Statuses only move a delivery forward; one for a send not recorded yet is kept and applied when it is. */
  const recordStatuses = async (statuses: WhatsAppStatus[]) => {
    if (!statuses.length) return;
    let resolvedUnanswered = false;
    const now = clock.now();
    const updated = await store.transaction(async ({ whatsapp }) => {
      const out: { s: WhatsAppStatus; d: DeliveryRecord | undefined; applied: boolean }[] = [];
      for (const s of statuses) {
        const errors = s.errors.length ? { errors: s.errors } : {};
        const d = await whatsapp.delivery(s.providerMessageId);
        const current = d ? d.status : (await whatsapp.earlyStatus(s.providerMessageId))?.status;
        const next = advanceStatus(current, s.status);
        const applied = next !== current;
        if (d && applied) await whatsapp.putDelivery(Object.assign({}, d, { status: next, updatedAt: now }, errors));
        if (!d && applied) await whatsapp.putEarlyStatus(s.providerMessageId, Object.assign({ status: next, at: now }, errors));
        // A status for a send whose answer we never got (crash, timeout): it was accepted.
        const jobId = s.callbackData;
        if (jobId && jobId.startsWith('out:') && s.status !== 'failed' && !(await whatsapp.sent(jobId))) {
          await whatsapp.putSent(jobId, { providerMessageId: s.providerMessageId, at: now });
          resolvedUnanswered = true;
        }
        out.push({ s, d, applied });
      }
      return out;
    });
    if (resolvedUnanswered) outboundQueue.expedite();
    for (const { s, d, applied } of updated) {
      telemetry.event({
        type: 'whatsapp.status',
        channel: 'whatsapp',
        customerId: d?.customerId,
        conversationId: d?.conversationId,
        data: {
          status: s.status,
          providerMessageId: s.providerMessageId,
          known: d !== undefined,
          applied,
          ...(s.callbackData ? { jobId: s.callbackData } : {}),
          ...(s.errors.length ? { errors: s.errors } : {}),
          ...pricingData(s, wa.prices),
        },
      });
    }
  };

  /** Webhook de-dup + queueing, one conditional write per message; resolves with the number queued. */
  const acceptInbound = async (messages: InboundWhatsApp[], source: 'webhook' | 'sdk') => {
    if (!messages.length) return 0;
    // The inbound queue's id index is the de-dup record (kept after the job is done, pruned after retention_days):
    // each message is stored only if its id is new, checked inside the commit.
    const jobs = await inbound.enqueueAll(messages.map((m) => ({ payload: m, options: { id: `wa:${m.waMessageId}` } })));
    messages.forEach((m, i) => {
      if (jobs[i]) telemetry.event({ type: 'whatsapp.inbound', channel: 'whatsapp', data: { waMessageId: m.waMessageId, kind: m.kind, source } });
    });
    return jobs.filter(Boolean).length;
  };

  /**
   * What Meta sends for the business's numbers: all of them (`other_numbers: answer`), or only phone_id's; with no
   * phone_id configured (test mode's mock) everything is ours.
   */
  const forUs = <T extends { phoneNumberId: string }>(items: T[], what: string): T[] => {
    if (!wa.phone_id || wa.other_numbers === 'answer') return items;
    const ours = items.filter((x) => x.phoneNumberId === wa.phone_id);
    if (ours.length < items.length) {
      const others = [...new Set(items.filter((x) => x.phoneNumberId !== wa.phone_id).map((x) => x.phoneNumberId))];
      log.warn({ ignored: items.length - ours.length, phoneNumberIds: others }, `webhook ${what} for another phone number ignored`);
      telemetry.event({ type: 'whatsapp.ignored', channel: 'whatsapp', data: { what, count: items.length - ours.length, phoneNumberIds: others } });
    }
    return ours;
  };

  if (wa.enabled && wa.provider === 'sdk') {
    const setIngest = (hub as SdkHub & { setIngestHandler?: (h: unknown) => void }).setIngestHandler;
    setIngest?.(async (frame: { channel: string; from: string; text: string; messageId?: string }) => {
      if (frame.channel !== 'whatsapp') return { ok: false, error: 'only the whatsapp channel can be ingested' };
      const user = parseWhatsAppUser(frame.from);
      if (!user) return { ok: false, error: 'from: not a phone number (E.164 expected) or a BSUID (e.g. US.13491208655302741918)' };
      const from = 'phone' in user ? user.phone : user.bsuid;
      await acceptInbound(
        [{ waMessageId: frame.messageId ?? randomUUID(), from, phoneNumberId: 'sdk', text: frame.text, kind: 'text', timestampMs: clock.now(), ...user }],
        'sdk',
      );
      return { ok: true };
    });
  }

  const plugin = async (app: FastifyInstance) => {
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
        let json: unknown;
        try {
          json = sjson.parse(raw.toString('utf8'), { protoAction: 'error', constructorAction: 'error' });
        } catch {
          throw new HttpError('bad_request', 'Body is not valid JSON');
        }
        if (jsonDepth(json, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) throw new HttpError('bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
        let parsed;
        try {
          parsed = parseWebhook(json);
        } catch (err) {
          if (err instanceof WebhookPayloadError) throw new HttpError('validation_failed', err.message);
          throw err;
        }
        // Customer messages and identity changes are queued (durable, ordered per user); the rest starts no turn.
        // Statuses are acknowledged too: stored before the 200 (one marks an interrupted send as delivered). A store
        // that cannot write, or answers too slowly, is a 503 (the error handler): Meta retries, nothing is lost.
        const queued = await withinDeadline(
          (async () => {
            const n = await acceptInbound(forUs([...parsed.messages, ...parsed.events], 'messages'), 'webhook');
            await recordStatuses(forUs(parsed.statuses, 'statuses'));
            return n;
          })(),
        );
        reportWebhookParts({ ignored: parsed.ignored, quiet: forUs(parsed.quiet, 'events'), log, telemetry });
        return { received: parsed.received, queued, statuses: parsed.statuses.length, ignored: parsed.ignored.length };
      });
    });
  };

  const enabled = wa.enabled;
  return {
    sink,
    outbound,
    inbound,
    outboundQueue,
    plugin,
    async start() {
      if (!enabled) return;
      await Promise.all([inbound.start(), outboundQueue.start()]);
      hub.onChange(() => {
        if (hub.canSend()) outboundQueue.expedite();
      });
    },
    async stop() {
      await Promise.all([inbound.stop(), outboundQueue.stop()]);
    },
    async prune() {
      const cutoff = clock.now() - retentionMs;
      return (await book.prune(cutoff)) + (await inbound.prune(cutoff)) + (await outboundQueue.prune(cutoff));
    },
    diagnostics: async () => ({
      enabled,
      provider: wa.provider,
      sender: sender.name,
      inbound: { depth: inbound.depth(), inFlight: inbound.inFlight() },
      outbound: { depth: outboundQueue.depth(), inFlight: outboundQueue.inFlight(), deadLetters: (await outboundQueue.deadLetters(20)).length },
    }),
  };
}

export { createOutbox };
