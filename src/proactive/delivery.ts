// Where an accepted proactive message goes, written in the same transaction
// as its reservation (see ProactiveServiceOptions.deliver). Web: the
// customer's web conversation history (a closed widget shows it on its next
// `ready`), then a push to every open widget. WhatsApp: the durable outbound
// queue (text, or a template outside the 24-hour window).
import type { ProactiveDeliverArgs } from './service.ts';
import { conversationIdFor } from '../conversations/history.ts';
import type { StoreRepos } from '../store/repos.ts';
import type { Services } from '../services.ts';
import type { WebPush, WhatsAppOutbound } from './ports.ts';

export function createProactiveDelivery(deps: { services: Services; sessions: WebPush; whatsapp?: () => WhatsAppOutbound | undefined }) {
  const { services, sessions } = deps;
  // The message is already committed when this runs; a failed live push is logged, not an error to the caller.
  const safely = (messageId: string, run: () => void) => () => {
    try {
      run();
    } catch (err) {
      services.logger.warn({ err, messageId }, 'proactive after-commit delivery failed');
    }
  };
  return {
    whatsappEnabled: () => deps.whatsapp?.() !== undefined,
    async prepare(tx: StoreRepos, { messageId, customer, request }: ProactiveDeliverArgs): Promise<() => void> {
      if (request.channel === 'web') {
        const at = services.clock.now();
        const conversationId = conversationIdFor(customer.customerId, 'web');
        // After the conversation's lock: an append never interleaves with the conversation's own writes.
        await tx.conversations.lock(conversationId);
        await tx.history.append({ id: messageId, conversationId, role: 'assistant', text: request.content, at, proactive: true });
        return safely(messageId, () => {
          sessions.push(customer.customerId, { type: 'message', id: messageId, role: 'assistant', text: request.content, at, proactive: true });
          services.telemetry.event({
            type: 'message.out',
            conversationId,
            customerId: customer.customerId,
            customerExternalId: customer.externalId,
            channel: 'web',
            data: services.config.telemetry.store_text ? { id: messageId, proactive: true, text: request.content } : { id: messageId, proactive: true },
          });
        });
      }
      const wa = deps.whatsapp?.();
      if (!wa) throw new Error('the WhatsApp channel is not enabled');
      // The phone when known (Meta prefers it), else the BSUID of a username-only customer.
      const to = customer.phone ?? customer.bsuid;
      if (!to) throw new Error('customer has no WhatsApp number or BSUID');
      return safely(
        messageId,
        await wa.prepareProactive(tx, { messageId, customerId: customer.customerId, to, text: request.content, template: request.template }),
      );
    },
  };
}
