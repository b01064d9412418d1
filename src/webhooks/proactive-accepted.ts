// The `proactive.accepted` webhook event, stored in the same transaction as the reservation and the message it
// reports: a crash right after the commit cannot lose it, and a refused reservation never emits it.
import type { Clock } from '../clock.ts';
import type { ProactiveDeliverArgs, ProactiveServiceOptions } from '../proactive/service.ts';
import type { Webhooks } from './delivery.ts';
import type { NewWebhookEvent } from './events.ts';

type Deliver = ProactiveServiceOptions['deliver'];

/** The event's data: what the telemetry event of an accepted send carries, with the customer's ids. */
export function proactiveAcceptedEvent({ messageId, customer, request }: ProactiveDeliverArgs, at: number): NewWebhookEvent {
  const data: Record<string, unknown> = { customerId: customer.customerId, externalId: request.customerExternalId, channel: request.channel };
  if (request.dedupKey !== undefined) data.dedupKey = request.dedupKey;
  if (request.template !== undefined) data.template = request.template.name;
  data.messageId = messageId;
  return { type: 'proactive.accepted', createdAt: at, data };
}

/** `deliver` that also stores the event in the reservation's transaction (unchanged without webhooks). */
export function withAcceptedWebhook(deliver: Deliver, webhooks: Pick<Webhooks, 'prepare'> | undefined, clock: Clock): Deliver {
  if (!webhooks) return deliver;
  return Object.assign({}, deliver, {
    async prepare(tx: Parameters<Deliver['prepare']>[0], args: ProactiveDeliverArgs) {
      const delivered = await deliver.prepare(tx, args);
      const accepted = await webhooks.prepare(tx, [proactiveAcceptedEvent(args, clock.now())]);
      return () => {
        delivered();
        accepted();
      };
    },
  });
}
