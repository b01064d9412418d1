// The inbound worker: the durable queue of WhatsApp messages received (webhook or SDK ingest), ordered per sender.
// Each job resolves the customer, opens their 24 h window, and hands the message to the conversation — unless it is
// a number change (never a turn), a rating button, an answer to a pending confirmation, or a press of a confirmation
// a handoff cancelled.
import type { ConversationHost } from '../conversations/host.ts';
import { conversationIdFor } from '../conversations/history.ts';
import type { Customer, CustomerRepo, WhatsAppIdentity } from '../customers/repo.ts';
import { createJobQueue, type JobQueue } from '../jobs/queue.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { answeredCancelledPress } from './cancelled.ts';
import { confirmationAnswer } from './confirmation.ts';
import { RATING_THANKS, ratingPress } from './feedback.ts';
import type { Notices } from './notices.ts';
import type { NumberRouting } from './numbers.ts';
import type { OutboundJob } from './outbound-worker.ts';
import type { InboundIdentityEvent, InboundMessage, InboundWhatsApp } from './webhook-payload.ts';

export interface InboundDeps {
  services: Services;
  customers: CustomerRepo;
  host: () => ConversationHost;
  /** The customer's rating (outcomes, `outcomes.csat`): a rating button's press. */
  rate?: (conversationId: string, rating: { score: number; id: string }) => Promise<boolean>;
  outboundQueue: JobQueue<OutboundJob>;
  routing: NumberRouting;
  sendNotice: Notices['sendNotice'];
  /** Conversation id → the WhatsApp message id answering its pending confirmation right now (read by the sink). */
  confirming: Map<string, string>;
  log: Logger;
}

export function createInboundWorker(deps: InboundDeps): JobQueue<InboundWhatsApp> {
  const { store, clock, config, logger } = deps.services;
  return createJobQueue<InboundWhatsApp>({
    store,
    clock,
    logger,
    name: 'wa-inbound',
    orderingKey: (m) => m.from,
    leaseMs: config.channels.whatsapp.lease_ms,
    maxAttempts: 10,
    concurrency: 16,
    keepDoneIds: true,
    handler: async (job) => {
      const m = job.payload;
      if (m.kind === 'identity') await applyIdentityEvent(deps, m);
      else await handleMessage(deps, m);
      return 'done';
    },
  });
}

/** Who sent an inbound message; a job queued before BSUIDs carries only `from`, a phone. */
const senderIds = (m: InboundMessage): WhatsAppIdentity => {
  if (!m.phone && !m.bsuid) return { phone: m.from };
  const ids: WhatsAppIdentity = {};
  if (m.phone) ids.phone = m.phone;
  if (m.bsuid) ids.bsuid = m.bsuid;
  return ids;
};

async function handleMessage(deps: InboundDeps, m: InboundMessage): Promise<void> {
  const { store, clock } = deps.services;
  // Answered a confirmation in a run whose completion was not recorded (crash): not a new message.
  if (await store.whatsapp.handled(m.waMessageId)) return;
  const customer = await deps.customers.resolveWhatsApp(senderIds(m));
  // The 24-hour window opens when the customer wrote (Meta's timestamp), not when we got to it.
  const now = clock.now();
  await deps.customers.touchInbound(customer.customerId, 'whatsapp', m.timestampMs > 0 ? Math.min(m.timestampMs, now) : now, deps.routing.businessNumberOf(m));
  const host = deps.host();
  const conversationId = conversationIdFor(customer.customerId, 'whatsapp');
  if (await answeredRating(deps, m, customer, conversationId)) return;
  if (await answeredConfirmation(deps, host, m, conversationId)) return;
  const press = { replyId: m.replyId, waMessageId: m.waMessageId, customer, conversationId };
  if (await answeredCancelledPress({ store, outboundQueue: deps.outboundQueue, fromNumberFor: deps.routing.fromNumberFor }, press)) return;
  await host.receive(customer, 'whatsapp', { messageId: `wa:${m.waMessageId}`, text: m.text, content: m.content });
}

/** A rating is not a message to answer: stored, thanked for, and marked handled (a re-run does not store it twice). */
async function answeredRating(deps: InboundDeps, m: InboundMessage, customer: Customer, conversationId: string): Promise<boolean> {
  const rating = ratingPress(m.replyId);
  if (!rating || rating.conversationId !== conversationId || !deps.rate) return false;
  if (await deps.rate(conversationId, { score: rating.score, id: m.waMessageId }))
    await deps.sendNotice(customer, conversationId, RATING_THANKS, `thanks:${m.waMessageId}`);
  await deps.services.store.whatsapp.markHandled(m.waMessageId, deps.services.clock.now());
  return true;
}

/** A Yes/No (button or typed) while a confirmation is pending: the conversation's answer, not a new message. */
async function answeredConfirmation(deps: InboundDeps, host: ConversationHost, m: InboundMessage, conversationId: string): Promise<boolean> {
  const pending = await host.pendingConfirmation(conversationId);
  if (!pending) return false;
  const answer = confirmationAnswer(m, pending.id);
  if (answer === undefined) return false;
  // The sink marks this message handled in the transaction that stores the confirmation.
  deps.confirming.set(conversationId, m.waMessageId);
  try {
    return await host.confirm(conversationId, pending.id, answer);
  } finally {
    deps.confirming.delete(conversationId);
  }
}

/** A number or BSUID change: linked to the same customer (and history); never a turn. */
async function applyIdentityEvent(deps: InboundDeps, e: InboundIdentityEvent): Promise<void> {
  const r = await deps.customers.changeWhatsAppIdentity(e.previous, e.next);
  deps.log.info(
    { waMessageId: e.waMessageId, systemType: e.systemType, changed: r.changed, reason: r.changed ? undefined : r.reason },
    'WhatsApp identity change',
  );
  deps.services.telemetry.event({
    type: 'whatsapp.identity',
    channel: 'whatsapp',
    customerId: r.customer?.customerId,
    customerExternalId: r.customer?.externalId,
    data: { waMessageId: e.waMessageId, systemType: e.systemType, changed: r.changed, ...(r.changed ? {} : { reason: r.reason }) },
  });
}
