// Which facts become outbound webhook events, and their `data`. Conversation facts are stored in the conversation's
// write (with the text, which telemetry may not keep), an accepted proactive send in its reservation's; blocked
// proactive requests, WhatsApp statuses and daemon verdicts come from the telemetry stream.
import { OPT_IN_WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../sdk/src/agent-api.ts';
import type { ConversationMeta, Pending } from '../conversations/host.ts';
import type { TelemetryEvent } from '../telemetry/types.ts';

export interface NewWebhookEvent {
  type: WebhookEventType;
  createdAt: number;
  data: Record<string, unknown>;
}

const about = (meta: ConversationMeta): Record<string, unknown> => {
  const d: Record<string, unknown> = { conversationId: meta.conversationId, customerId: meta.customerId, channel: meta.channel };
  if (meta.externalId !== undefined) d.externalId = meta.externalId;
  return d;
};

const OPT_IN = new Set<WebhookEventType>(OPT_IN_WEBHOOK_EVENT_TYPES);

/**
 * Whether an endpoint with this `events` list gets a type: one named in its list; without a list, every type but the
 * opt-in ones (a receiver on an SDK older than such a type would refuse it, and so have it retried, then dead-lettered).
 */
export const endpointWants = (events: readonly string[] | undefined, type: WebhookEventType): boolean =>
  events === undefined ? !OPT_IN.has(type) : events.includes(type);

/** A conversation's durable output as an event, or undefined when it is not one integrators get. */
export function conversationEvent(meta: ConversationMeta, { o, at }: Pending): NewWebhookEvent | undefined {
  const data = about(meta);
  switch (o.type) {
    case 'customer':
      return {
        type: 'message.customer',
        createdAt: at,
        data: Object.assign(data, { messageId: o.messageId, text: o.text }, o.content ? { content: o.content } : {}),
      };
    case 'reply':
      return {
        type: 'message.assistant',
        createdAt: at,
        data: Object.assign(data, { messageId: o.id, text: o.text, replyTo: o.replyTo }, o.sources ? { sources: o.sources } : {}),
      };
    case 'agent':
      return { type: 'message.agent', createdAt: at, data: Object.assign(data, { messageId: o.id, text: o.text, author: o.author }) };
    case 'confirmation':
      return { type: 'confirmation.resolved', createdAt: at, data: Object.assign(data, { confirmationId: o.id, name: o.name, outcome: o.outcome }) };
    case 'handoff':
      if (o.phase === 'requested')
        return {
          type: 'handoff.requested',
          createdAt: at,
          data: Object.assign(
            data,
            { source: o.source },
            o.reason === undefined ? {} : { reason: o.reason },
            o.agentId === undefined ? {} : { agentId: o.agentId },
          ),
        };
      // Opt-in (endpointWants): once per handoff, when no agent wrote within `handoff.offline_after_minutes`.
      if (o.phase === 'offline')
        return { type: 'handoff.offline', createdAt: at, data: Object.assign(data, { since: o.since, waitedMinutes: Math.floor((at - o.since) / 60_000) }) };
      if (o.phase === 'released')
        return {
          type: 'handoff.released',
          createdAt: at,
          data: Object.assign(data, { by: o.by }, o.agentId === undefined ? {} : { agentId: o.agentId }, o.resolvedBy ? { resolved: true } : {}),
        };
      return undefined;
    default:
      return undefined;
  }
}

// `proactive.accepted` is stored with the reservation instead (proactive-accepted.ts): it reports a message sent.
const FROM_TELEMETRY = new Set<string>(['proactive.blocked', 'whatsapp.status', 'daemon.verdict']);

/** A telemetry event that is also a webhook event (its data and the ids it carries). */
export function telemetryEvent(e: TelemetryEvent): NewWebhookEvent | undefined {
  if (!FROM_TELEMETRY.has(e.type)) return undefined;
  const data: Record<string, unknown> = {};
  if (e.conversationId !== undefined) data.conversationId = e.conversationId;
  if (e.customerId !== undefined) data.customerId = e.customerId;
  if (e.customerExternalId !== undefined) data.externalId = e.customerExternalId;
  if (e.channel !== undefined) data.channel = e.channel;
  for (const [k, v] of Object.entries(e.data)) if (v !== undefined) data[k] = v;
  return { type: e.type as WebhookEventType, createdAt: e.at, data };
}
