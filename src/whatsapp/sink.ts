// The channel sink of WhatsApp conversations: what a conversation says (replies, an agent's messages, confirmations as
// Yes/No buttons, handoff notices) becomes an outbound job prepared in the same transaction that stores it, and made
// runnable once that transaction commits. A confirmation's answer marks the WhatsApp message that gave it handled.
import type { ConversationOutput } from '../../machines/conversation.ts';
import { conversationLocale, questionFor, wordsFor } from '../customers/locale.ts';
import type { ChannelSink, ConversationMeta } from '../conversations/host.ts';
import { insideWhatsAppWindow } from '../customers/whatsapp-window.ts';
import type { HandoffOutlook } from '../handoff/outlook.ts';
import { handoffText } from '../handoff/texts.ts';
import type { Job, JobQueue } from '../jobs/queue.ts';
import type { Logger } from '../logger.ts';
import type { Services, Telemetry } from '../services.ts';
import type { StoreRepos } from '../store/repos.ts';
import { toWhatsAppReply, toWhatsAppText } from './format.ts';
import type { NumberRouting } from './numbers.ts';
import type { OutboundWhatsApp } from './outbound.ts';
import type { OutboundJob } from './outbound-worker.ts';
import { whatsappAddress } from './user-id.ts';

/** The outbound job's source id: reply, confirmation and agent message ids are unique; a handoff's only in its conversation. */
const sourceIdOf = (meta: ConversationMeta, o: ConversationOutput): string | undefined => {
  if (o.type === 'reply' || o.type === 'confirm' || o.type === 'agent') return o.id;
  if (o.type === 'handoff' && o.phase !== 'joined') return `${meta.conversationId}:${o.id}`;
  return undefined;
};

export function createWhatsAppSink(deps: {
  services: Pick<Services, 'clock' | 'config'> & { telemetry: Pick<Telemetry, 'event'> };
  outboundQueue: JobQueue<OutboundJob>;
  routing: NumberRouting;
  /** What a customer waiting for a person is told (business hours, the usual wait). */
  outlook?: Pick<HandoffOutlook, 'atHandoff'>;
  /** Conversation id → the WhatsApp message id answering its pending confirmation right now (the inbound worker's). */
  confirming: ReadonlyMap<string, string>;
  log: Logger;
}): ChannelSink {
  const { services, outboundQueue, routing, confirming, log } = deps;
  const { clock, telemetry } = services;
  const wa = services.config.channels.whatsapp;
  const { fromNumberFor } = routing;
  // Jobs prepared inside the conversation's transaction, made runnable once it commits.
  const prepared = new Map<string, Job<OutboundJob> | undefined>();
  // Handoff notices not sent because the 24 h window is closed: recorded once their conversation's write commits.
  const skippedNotices = new Set<string>();

  const messageFor = async (tx: StoreRepos, meta: ConversationMeta, o: ConversationOutput): Promise<OutboundWhatsApp | undefined> => {
    const c = await tx.customers.get(meta.customerId);
    const phone = c && whatsappAddress(c);
    if (!phone) return undefined;
    // Replies are written in Markdown (for the widget): WhatsApp gets its own formatting.
    if (o.type === 'reply') return Object.assign({ kind: 'text' as const, to: phone, text: toWhatsAppReply(o.text, o.sources) }, fromNumberFor(c));
    if (o.type === 'agent') return Object.assign({ kind: 'text' as const, to: phone, text: toWhatsAppText(o.text) }, fromNumberFor(c));
    if (o.type === 'handoff' && o.phase !== 'joined') {
      const text = await handoffText(o, deps.outlook?.atHandoff ?? (async () => ({ kind: 'open' as const })));
      return text === undefined ? undefined : Object.assign({ kind: 'text' as const, to: phone, text }, fromNumberFor(c));
    }
    if (o.type === 'confirm') {
      // In the customer's locale (channels.whatsapp.locale unless known): "¿Cancelar el pedido 1001?" [Sí] [No].
      const locale = conversationLocale(c, 'whatsapp', wa.locale);
      const words = wordsFor(locale);
      const buttons: OutboundWhatsApp = {
        kind: 'buttons',
        to: phone,
        text: questionFor(locale, o.summary),
        buttons: [
          { id: `confirm:${o.id}:yes`, title: words.yes },
          { id: `confirm:${o.id}:no`, title: words.no },
        ],
      };
      return Object.assign(buttons, fromNumberFor(c));
    }
    return undefined;
  };

  return {
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
}
