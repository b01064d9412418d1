// The SDK's live handoff notices (`onHandoff`: requested, offline, released — `resolved: true` when an agent's resolve
// released it; `onCustomerMessage`): which durable outputs become which frame. A resolve with no handoff has none.
import type { CustomerMessageFrame, HandoffFrame } from '../../sdk/src/protocol.ts';
import type { ConversationMeta, Pending } from './host.ts';

export function handoffNotice(meta: ConversationMeta, { o, at }: Pending): HandoffFrame | CustomerMessageFrame | undefined {
  const ids = { conversationId: meta.conversationId, customerId: meta.customerId, channel: meta.channel };
  const withExternal = <T extends object>(f: T): T => (meta.externalId === undefined ? f : Object.assign(f, { externalId: meta.externalId }));
  if (o.type === 'forward') return withExternal(Object.assign({ type: 'customer_message' as const, messageId: o.messageId, text: o.text, at }, ids));
  if (o.type !== 'handoff' || o.phase === 'joined') return undefined;
  if (o.phase === 'released')
    return withExternal(
      Object.assign({ type: 'handoff' as const, phase: 'released' as const, by: o.by, at }, ids, o.resolvedBy ? { resolved: true as const } : {}),
    );
  // Once per handoff (the machine emits it once): nobody wrote in time and the customer was just told so.
  if (o.phase === 'offline') return withExternal(Object.assign({ type: 'handoff' as const, phase: 'offline' as const, since: o.since, at }, ids));
  const f: HandoffFrame = Object.assign({ type: 'handoff' as const, phase: 'requested' as const, source: o.source, at }, ids);
  if (o.reason !== undefined) f.reason = o.reason;
  return withExternal(f);
}
