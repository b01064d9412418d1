// The web channel's handoff notices (issue 35): after the `status` frame of a handoff (and of the offline notice), a
// `handoff_notice` frame saying what the customer can expect, pushed to every open widget of the customer once it is
// worked out (business hours, the usual wait, whether an address was left). Also the notice a widget gets in `ready`.
import type { WidgetHandoffNoticeFrame } from '../../sdk/src/widget-protocol.ts';
import type { ConversationOutput } from '../../machines/conversation.ts';
import type { ChannelSink, ConversationMeta } from '../conversations/types.ts';
import type { Logger } from '../logger.ts';
import type { Customer, HandoffInfo } from '../store/model.ts';
import type { StoreRepos } from '../store/repos.ts';
import { asksEmail, type HandoffNotice, type HandoffOutlook } from './outlook.ts';

interface Deps {
  outlook: HandoffOutlook;
  store: Pick<StoreRepos, 'customers' | 'conversations'>;
  now: () => number;
  logger: Logger;
}

export function noticeFrame(notice: HandoffNotice, customer: Customer | undefined, at: number): WidgetHandoffNoticeFrame {
  const frame: WidgetHandoffNoticeFrame = Object.assign({ type: 'handoff_notice' as const, askEmail: asksEmail(notice, customer), at }, notice);
  if (customer?.contact) frame.contactEmail = customer.contact.email;
  return frame;
}

/** The notice for a widget that (re)connects while its conversation waits for a person. */
export async function readyNotice(d: Deps, handoff: HandoffInfo | undefined, customerId: string): Promise<WidgetHandoffNoticeFrame | undefined> {
  const notice = await d.outlook.during(handoff);
  return notice && noticeFrame(notice, await d.store.customers.get(customerId), d.now());
}

/** `sessions` with the handoff notices after the handoff's and the offline notice's outputs. */
export function withHandoffNotices<S extends ChannelSink & { push(customerId: string, frame: Record<string, unknown>): number }>(
  sessions: S,
  d: Deps,
): ChannelSink {
  const send = async (meta: ConversationMeta, o: Extract<ConversationOutput, { type: 'handoff' }>) => {
    const record = await d.store.conversations.get(meta.conversationId);
    // An agent wrote meanwhile, or it is back with the assistant: nothing to expect any more.
    if (!record?.handoff || record.handoff.agent) return;
    const notice = o.phase === 'offline' ? ({ kind: 'offline' } as const) : await d.outlook.atHandoff();
    sessions.push(meta.customerId, noticeFrame(notice, await d.store.customers.get(meta.customerId), d.now()));
  };
  return {
    write: sessions.write?.bind(sessions),
    accepted: sessions.accepted?.bind(sessions),
    stream: sessions.stream?.bind(sessions),
    deliver(meta, o) {
      sessions.deliver?.(meta, o);
      if (o.type === 'handoff' && (o.phase === 'requested' || o.phase === 'offline'))
        void send(meta, o).catch((err) => d.logger.warn({ err, conversationId: meta.conversationId }, 'handoff notice not sent'));
    },
  };
}
