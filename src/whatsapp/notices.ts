// What Parley sends on WhatsApp of its own accord, through the durable outbound queue: short notices (a rating's
// thanks), the rating request, and proactive messages (src/proactive, through its WhatsAppOutbound port).
import { conversationIdFor } from '../conversations/history.ts';
import type { Customer } from '../customers/repo.ts';
import { insideWhatsAppWindow } from '../customers/whatsapp-window.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { WhatsAppOutbound } from '../proactive/ports.ts';
import type { Services } from '../services.ts';
import { ratingRequest } from './feedback.ts';
import { toWhatsAppText } from './format.ts';
import type { NumberRouting } from './numbers.ts';
import type { OutboundWhatsApp } from './outbound.ts';
import type { OutboundJob } from './outbound-worker.ts';
import { whatsappAddress } from './user-id.ts';

export interface Notices {
  /** A free-form notice of Parley's own to the customer (inside their 24 h window), through the outbound queue. */
  sendNotice(c: Customer, conversationId: string, text: string, sourceId: string): Promise<void>;
  /** Asks for a rating with reply buttons (inside the 24 h window only); a skipped one is `whatsapp.notice_skipped`. */
  askRating(r: { conversationId: string; customerId: string; endedAt?: number }): Promise<void>;
  outbound: WhatsAppOutbound;
}

export function createNotices(deps: {
  services: Pick<Services, 'store' | 'clock' | 'telemetry'>;
  outboundQueue: JobQueue<OutboundJob>;
  routing: NumberRouting;
}): Notices {
  const { services, outboundQueue, routing } = deps;
  const { store, clock, telemetry } = services;
  const { fromNumberFor } = routing;

  async function sendNotice(c: Customer, conversationId: string, text: string, sourceId: string) {
    const to = whatsappAddress(c);
    if (!to || !insideWhatsAppWindow(c, clock.now())) return;
    await outboundQueue.enqueue(
      { message: Object.assign({ kind: 'text' as const, to, text }, fromNumberFor(c)), customerId: c.customerId, conversationId, sourceId },
      { id: `out:${sourceId}` },
    );
  }

  const askRating = async (r: { conversationId: string; customerId: string; endedAt?: number }) => {
    const sourceId = `csat:${r.conversationId}:${r.endedAt ?? 0}`;
    const c = await store.customers.get(r.customerId);
    const req = ratingRequest(c, c && whatsappAddress(c), r.conversationId, clock.now());
    if ('skipped' in req) {
      telemetry.event({
        type: 'whatsapp.notice_skipped',
        conversationId: r.conversationId,
        customerId: r.customerId,
        channel: 'whatsapp',
        data: { notice: 'rating', reason: req.skipped },
      });
      return;
    }
    const message = Object.assign(req.message, fromNumberFor(c));
    await outboundQueue.enqueue({ message, customerId: r.customerId, conversationId: r.conversationId, sourceId }, { id: `out:${sourceId}` });
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

  return { sendNotice, askRating, outbound };
}
