// Where an accepted proactive message goes. Web: stored in the customer's web
// conversation history (so a closed widget shows it on its next `ready`) and
// pushed at once to every open widget. WhatsApp: the durable outbound queue.
import type { ProactiveDeliverArgs } from './service.ts';
import type { HistoryRepo } from '../conversations/history.ts';
import { conversationIdFor } from '../conversations/history.ts';
import type { WebSessions } from '../channels/web-sessions.ts';
import type { Services } from '../services.ts';

export interface WhatsAppOutbound {
  /** Durably queues a proactive WhatsApp message (text, or a template). */
  enqueueProactive(args: { messageId: string; customerId: string; to: string; text: string; template?: { name: string; language: string; parameters?: string[] } }): Promise<void>;
}

export function createProactiveDelivery(deps: { services: Services; history: HistoryRepo; sessions: WebSessions; whatsapp?: () => WhatsAppOutbound | undefined }) {
  const { services, history, sessions } = deps;
  return async function deliver({ messageId, customer, request }: ProactiveDeliverArgs): Promise<void> {
    if (request.channel === 'web') {
      const at = services.clock.now();
      const conversationId = conversationIdFor(customer.customerId, 'web');
      await services.store.transaction(() => {
        history.appendInTx({ id: messageId, conversationId, role: 'assistant', text: request.content, at, proactive: true });
      });
      sessions.push(customer.customerId, { type: 'message', id: messageId, role: 'assistant', text: request.content, at, proactive: true });
      services.telemetry.event({ type: 'message.out', conversationId, customerId: customer.customerId, customerExternalId: customer.externalId, channel: 'web', data: { id: messageId, proactive: true } });
      return;
    }
    const wa = deps.whatsapp?.();
    if (!wa) throw new Error('the WhatsApp channel is not enabled');
    if (!customer.phone) throw new Error('customer has no WhatsApp number');
    await wa.enqueueProactive({ messageId, customerId: customer.customerId, to: customer.phone, text: request.content, template: request.template });
  };
}
