// A WhatsApp customer pressing Yes/No on a confirmation that was cancelled because a person took the conversation over
// (issue 34 part 6): told so, in one short text sent through the durable outbound queue, and not taken for a message.
import type { Customer } from '../customers/repo.ts';
import type { Job, JobQueue } from '../jobs/queue.ts';
import type { Store } from '../store/repos.ts';
import type { OutboundWhatsApp } from './outbound.ts';
import { whatsappAddress } from './user-id.ts';

export const CANCELLED_TEXT = 'That request was cancelled: a person from our team is taking over.';

const CONFIRM_REPLY = /^confirm:(.+):(yes|no)$/;

interface Deps<J> {
  store: Store;
  outboundQueue: JobQueue<J>;
  fromNumberFor: (c: Customer | undefined) => { fromNumberId?: string };
}

/**
 * True when `replyId` is a button of a confirmation this conversation cancelled for a handoff: the customer has been
 * answered (the text is queued durably, once per pressed message).
 */
export async function answeredCancelledPress<J extends { message: OutboundWhatsApp; customerId: string; conversationId?: string; sourceId: string }>(
  deps: Deps<J>,
  o: { replyId: string | undefined; waMessageId: string; customer: Customer; conversationId: string },
): Promise<boolean> {
  const pressed = o.replyId ? CONFIRM_REPLY.exec(o.replyId) : null;
  if (!pressed) return false;
  const cancelledId = `${pressed[1]}:cancelled`;
  const records = await deps.store.history.recent(o.conversationId, 200, ['confirmation']);
  if (!records.some((r) => r.id === cancelledId)) return false;
  const to = whatsappAddress(o.customer);
  if (!to) return false;
  const sourceId = `cancelled:${o.waMessageId}`;
  const message: OutboundWhatsApp = Object.assign({ kind: 'text' as const, to, text: CANCELLED_TEXT }, deps.fromNumberFor(o.customer));
  const job: Job<J> | undefined = await deps.store.transaction((tx) =>
    deps.outboundQueue.prepare(tx, { message, customerId: o.customer.customerId, conversationId: o.conversationId, sourceId } as J, { id: `out:${sourceId}` }),
  );
  deps.outboundQueue.accept([job]);
  return true;
}
