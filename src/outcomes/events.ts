// An outcome change as a telemetry event (metrics, the dashboard) and as a webhook event (`conversation.outcome`).
import type { NewEvent } from '../services.ts';
import type { ConversationOutcome } from '../store/outcomes.ts';
import type { NewWebhookEvent } from '../webhooks/events.ts';
import type { OutcomeChange } from './definitions.ts';

/** What both events carry: the outcome (or `reopened`), the reason category, the reopens, and the times measured. */
export function outcomeData(c: OutcomeChange): Record<string, unknown> {
  const r: ConversationOutcome = c.record;
  const data: Record<string, unknown> = { outcome: c.outcome, reopens: r.reopens, startedAt: r.startedAt };
  if (c.outcome === 'handed_over' && r.reason !== undefined) data.reason = r.reason;
  if (r.firstResponseAt !== undefined) data.firstResponseMs = r.firstResponseAt - r.startedAt;
  if (c.outcome !== 'reopened' && r.endedAt !== undefined) data.resolutionMs = r.endedAt - r.startedAt;
  return data;
}

export function outcomeTelemetry(c: OutcomeChange): NewEvent {
  const r = c.record;
  const e: NewEvent = {
    type: 'conversation.outcome',
    at: c.at,
    conversationId: r.conversationId,
    customerId: r.customerId,
    channel: r.channel,
    data: outcomeData(c),
  };
  if (r.externalId !== undefined) e.customerExternalId = r.externalId;
  return e;
}

export function outcomeWebhook(c: OutcomeChange): NewWebhookEvent {
  const r = c.record;
  const data: Record<string, unknown> = { conversationId: r.conversationId, customerId: r.customerId, channel: r.channel };
  if (r.externalId !== undefined) data.externalId = r.externalId;
  return { type: 'conversation.outcome', createdAt: c.at, data: Object.assign(data, outcomeData(c)) };
}
