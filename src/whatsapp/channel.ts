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
//
// This file composes the parts, each in its own file: the sender (sender.ts),
// the outbound worker (outbound-worker.ts), what Parley sends of its own
// (notices.ts), the inbound worker (inbound-worker.ts), the conversation sink
// (sink.ts), delivery statuses (statuses.ts), the ways in (ingest.ts) and the
// webhook route (webhook-route.ts).
import type { FastifyInstance } from 'fastify';
import type { ChannelSink, ConversationHost } from '../conversations/host.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import { HANDOFF_TEXTS } from '../handoff/texts.ts';
import type { HandoffOutlook } from '../handoff/outlook.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { WhatsAppOutbound } from '../proactive/ports.ts';
import type { SdkHub, Services } from '../services.ts';
import { checkWhatsAppConfig } from './config-check.ts';
import { createInboundWorker } from './inbound-worker.ts';
import { createInboundAcceptor, registerSdkIngest } from './ingest.ts';
import { createOutbox, type Outbox } from './mock-sender.ts';
import { createNotices } from './notices.ts';
import { numberRouting } from './numbers.ts';
import { createOutboundWorker, type OutboundJob } from './outbound-worker.ts';
import { createWhatsAppSender } from './sender.ts';
import { createWhatsAppSink } from './sink.ts';
import { createStatusRecorder } from './statuses.ts';
import { createWebhookPlugin } from './webhook-route.ts';
import type { InboundWhatsApp } from './webhook-payload.ts';

export type { OutboundJob };
export { checkWhatsAppConfig };
export { confirmationAnswer } from './confirmation.ts';

/** One short text for each change of who answers (human handoff): src/handoff/texts.ts. */
export { HANDOFF_TEXTS };

export interface WhatsAppChannel {
  sink: ChannelSink;
  /** Asks the customer for a rating with reply buttons, inside the 24 h window (outcomes, `outcomes.csat`). */
  askRating(r: { conversationId: string; customerId: string; endedAt?: number }): Promise<void>;
  outbound: WhatsAppOutbound;
  inbound: JobQueue<InboundWhatsApp>;
  outboundQueue: JobQueue<OutboundJob>;
  plugin: (app: FastifyInstance) => Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  prune(): Promise<number>;
  diagnostics(): Promise<Record<string, unknown>>;
}

export function createWhatsAppChannel(deps: {
  services: Services;
  customers: CustomerRepo;
  hub: SdkHub;
  host: () => ConversationHost;
  outbox: Outbox;
  /** What a customer waiting for a person is told (business hours, the usual wait). */
  outlook?: Pick<HandoffOutlook, 'atHandoff'>;
  /** The customer's rating (outcomes, `outcomes.csat`): a rating button's press. */
  rate?: (conversationId: string, rating: { score: number; id: string }) => Promise<boolean>;
}): WhatsAppChannel {
  const { services, customers, hub } = deps;
  const { store, clock, config, telemetry, logger } = services;
  const wa = config.channels.whatsapp;
  checkWhatsAppConfig(services);
  const log = logger.child({ component: 'whatsapp' });
  const retentionMs = wa.retention_days * 24 * 3600_000;
  const routing = numberRouting(wa);
  // De-dup of inbound ids lives in the inbound queue's kept ids (after the job is done); the store's WhatsApp
  // bookkeeping holds messages answered by a confirmation (see the sink), sends in flight and accepted, deliveries.
  const book = store.whatsapp;
  // Conversation id → the WhatsApp message id answering its pending confirmation right now (inbound worker → sink).
  const confirming = new Map<string, string>();

  const sender = createWhatsAppSender({ services, hub, outbox: deps.outbox });
  const outboundQueue = createOutboundWorker({ services, sender, log });
  const { sendNotice, askRating, outbound } = createNotices({ services, outboundQueue, routing });
  const inbound = createInboundWorker({ services, customers, host: deps.host, rate: deps.rate, outboundQueue, routing, sendNotice, confirming, log });
  const sink = createWhatsAppSink({ services, outboundQueue, routing, outlook: deps.outlook, confirming, log });
  const recordStatuses = createStatusRecorder({ services, outboundQueue });
  const acceptInbound = createInboundAcceptor({ inbound, telemetry });
  registerSdkIngest({ services, hub, acceptInbound });
  const plugin = createWebhookPlugin({ wa, log, telemetry, acceptInbound, recordStatuses });

  const enabled = wa.enabled;
  return {
    askRating,
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
