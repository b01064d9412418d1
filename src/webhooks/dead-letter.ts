// What a webhook dead letter keeps (issue 34, part 2): the event's id, type and time and the ids and metadata in its
// data, never the customer's words (message text, WhatsApp content, handoff reasons, agent names, daemon summaries).
// Dead letters are listed by id and metadata only, and they are kept for `webhooks.keep_days`, which may be longer
// than `telemetry.retention_days` (how long Parley keeps text).
import type { WebhookJob } from './types.ts';

/** The keys of an event's `data` a dead letter keeps. */
const METADATA = new Set([
  'conversationId',
  'customerId',
  'externalId',
  'channel',
  'messageId',
  'replyTo',
  'confirmationId',
  'name',
  'outcome',
  'source',
  'by',
  'providerMessageId',
  'status',
  'dedupKey',
  'template',
  'verdict',
  'since',
  'waitedMinutes',
]);

export function deadLetterPayload(p: WebhookJob): WebhookJob {
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p.event.data)) if (METADATA.has(k) && (typeof v !== 'object' || v === null)) data[k] = v;
  return { url: p.url, event: { id: p.event.id, type: p.event.type, createdAt: p.event.createdAt, data } };
}
