// The outbound worker: the durable queue of WhatsApp messages to send (replies, notices, proactive messages) and the
// handler that sends each exactly once, records its delivery, retries what may succeed and dead-letters the rest.
//
// Exactly once: a send is marked before the request goes out. If its answer never came (a crash, a timeout, a reset
// connection) it is not resent at once: Meta echoes the job id in its status webhook, which marks the job sent; only
// when no status came within the grace period was the message not accepted, and it goes again.
import { createJobQueue, type Job, type JobOutcome, type JobQueue } from '../jobs/queue.ts';
import type { Logger } from '../logger.ts';
import type { Services, Telemetry } from '../services.ts';
import type { StoreRepos } from '../store/repos.ts';
import type { WhatsAppConfig } from './config-check.ts';
import { advanceStatus } from './delivery-status.ts';
import { backoffDelay, type OutboundWhatsApp, type SendResult, type WhatsAppSender } from './outbound.ts';

export interface OutboundJob {
  message: OutboundWhatsApp;
  customerId: string;
  conversationId?: string;
  /** The reply or proactive message id this job delivers. */
  sourceId: string;
  proactive?: boolean;
}

type Failed = Extract<SendResult, { ok: false }>;

/** What the worker uses of the services (tests give it a real store, a manual clock and a telemetry recorder). */
export type OutboundServices = Pick<Services, 'store' | 'clock' | 'config' | 'logger'> & { telemetry: Pick<Telemetry, 'event'> };

interface Ctx {
  services: OutboundServices;
  wa: WhatsAppConfig;
  sender: WhatsAppSender;
  log: Logger;
  /**
   * Send markers this process failed to write, by job id → the marker's `startedAt`: no request went out under them.
   * A database may still commit such a write (its answer was lost); the next run must not take it for an unanswered
   * send and wait out the grace. In memory only: after a restart nobody knows, and the grace applies.
   */
  unsentMarkers: Map<string, number>;
}

export function createOutboundWorker(deps: { services: OutboundServices; sender: WhatsAppSender; log: Logger }): JobQueue<OutboundJob> {
  const { services, sender, log } = deps;
  const { store, clock, config, telemetry, logger } = services;
  const wa = config.channels.whatsapp;
  const ctx: Ctx = { services, wa, sender, log, unsentMarkers: new Map() };
  return createJobQueue<OutboundJob>({
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
    handler: (job) => sendJob(ctx, job),
  });
}

/** One run of an outbound job: already sent (a status said so), waiting, or a send and what its answer means. */
async function sendJob(ctx: Ctx, job: Job<OutboundJob>): Promise<JobOutcome> {
  const { store, clock } = ctx.services;
  const done = await store.whatsapp.sent(job.id);
  if (done) {
    if (!(await store.whatsapp.delivery(done.providerMessageId))) {
      await store.transaction((tx) => recordDelivery(tx, job, done.providerMessageId, done.at));
      outboundEvent(ctx, job, accepted(ctx, job, done.providerMessageId, { resolvedBy: 'status' }));
    }
    return 'done';
  }
  const stored = await store.whatsapp.sendAttempt(job.id);
  // A marker whose write failed before the request went out (its commit landed after all) hides no send.
  const attempt = stored && ctx.unsentMarkers.get(job.id) === stored.startedAt ? undefined : stored;
  const now = clock.now();
  const wait = waitBeforeSending(ctx, job, attempt, now);
  if (wait) return wait;
  if (attempt) {
    ctx.log.debug({ jobId: job.id, startedAt: attempt.startedAt }, 'resending an unanswered send');
    outboundEvent(ctx, job, { status: 'resending', reason: 'no status arrived for an unanswered send', jobId: job.id });
  }
  await markSend(ctx, job.id, now);
  const result = await ctx.sender.send(Object.assign({}, job.payload.message, { callbackData: job.id }));
  if (result.ok) return sendAccepted(ctx, job, result.providerMessageId);
  if (result.uncertain) return sendUncertain(ctx, job, result, now);
  return sendFailed(ctx, job, result);
}

/** An unanswered send still inside its grace, or no sender to send with: wait (without using an attempt). */
function waitBeforeSending(ctx: Ctx, job: Job<OutboundJob>, attempt: { startedAt: number } | undefined, now: number): JobOutcome | undefined {
  const { wa, sender } = ctx;
  if (attempt && now < attempt.startedAt + wa.uncertain_grace_ms)
    return { waitUntil: attempt.startedAt + wa.uncertain_grace_ms, reason: 'waiting for a status of an unanswered send' };
  if (sender.ready && !sender.ready()) {
    // Waiting for a sender uses no attempts; registering one expedites the queue.
    const deadline = job.enqueuedAt + wa.sdk_wait_ms;
    if (now >= deadline) return { fail: `no SDK with onSend connected within sdk_wait_ms (${wa.sdk_wait_ms} ms)` };
    return { waitUntil: deadline, reason: 'waiting for an SDK with onSend' };
  }
  return undefined;
}

/** The marker written before the request goes out; one whose write failed is remembered as hiding no send. */
async function markSend(ctx: Ctx, jobId: string, now: number): Promise<void> {
  try {
    await ctx.services.store.whatsapp.putSendAttempt(jobId, { startedAt: now });
  } catch (err) {
    ctx.unsentMarkers.set(jobId, now);
    throw err;
  }
  ctx.unsentMarkers.delete(jobId);
}

async function sendAccepted(ctx: Ctx, job: Job<OutboundJob>, providerMessageId: string): Promise<JobOutcome> {
  const at = ctx.services.clock.now();
  await ctx.services.store.transaction(async (tx) => {
    await tx.whatsapp.putSent(job.id, { providerMessageId, at });
    await tx.whatsapp.removeSendAttempt(job.id);
    await recordDelivery(tx, job, providerMessageId, at);
  });
  outboundEvent(ctx, job, accepted(ctx, job, providerMessageId, { attempts: job.attempts + 1 }));
  return 'done';
}

/** The request went out but no answer came: accepted if its status came meanwhile, else wait for one before resending. */
async function sendUncertain(ctx: Ctx, job: Job<OutboundJob>, result: Failed, now: number): Promise<JobOutcome> {
  const { store } = ctx.services;
  // Its status may already have come in while the request hung.
  const confirmed = await store.whatsapp.sent(job.id);
  if (confirmed) {
    await store.transaction(async (tx) => {
      await tx.whatsapp.removeSendAttempt(job.id);
      await recordDelivery(tx, job, confirmed.providerMessageId, confirmed.at);
    });
    outboundEvent(ctx, job, accepted(ctx, job, confirmed.providerMessageId, { resolvedBy: 'status' }));
    return 'done';
  }
  // The marker stays: the next run waits for a status until the grace period is over.
  outboundEvent(ctx, job, { status: 'uncertain', code: result.code, message: result.message, attempt: job.attempts + 1, jobId: job.id });
  return { retryAt: now + ctx.wa.uncertain_grace_ms, error: `${result.message} (waiting for a status before resending)` };
}

/** A refused send: retried when it may succeed (backoff, Retry-After), else failed (a dead letter). */
async function sendFailed(ctx: Ctx, job: Job<OutboundJob>, result: Failed): Promise<JobOutcome> {
  await ctx.services.store.whatsapp.removeSendAttempt(job.id);
  outboundEvent(ctx, job, {
    status: result.retryable ? 'retrying' : 'failed',
    httpStatus: result.status,
    code: result.code,
    message: result.message,
    attempt: job.attempts + 1,
  });
  if (result.retryable) return { retryAt: ctx.services.clock.now() + backoffDelay(job.attempts, result.retryAfterMs), error: result.message };
  return { fail: `${result.code ?? result.status ?? 'error'}: ${result.message}` };
}

/** The data of an `accepted` outbound event: resolved by a status, or by the send's own answer after n attempts. */
function accepted(ctx: Ctx, job: Job<OutboundJob>, providerMessageId: string, how: { resolvedBy: 'status' } | { attempts: number }) {
  const p = job.payload;
  return { status: 'accepted', providerMessageId, kind: p.message.kind, sender: ctx.sender.name, ...how, proactive: p.proactive ?? false };
}

function outboundEvent(ctx: Ctx, job: Job<OutboundJob>, data: Record<string, unknown>): void {
  const p = job.payload;
  ctx.services.telemetry.event({
    type: 'whatsapp.outbound',
    data,
    customerId: p.customerId,
    conversationId: p.conversationId,
    channel: 'whatsapp',
  });
}

/** In a transaction: the delivery record of an accepted send, with any status that arrived before it. */
async function recordDelivery(tx: StoreRepos, job: Job<OutboundJob>, providerMessageId: string, at: number): Promise<void> {
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
