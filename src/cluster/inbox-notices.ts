// Wake-ups for a conversation's owner, on the cluster bus: `<nodeId> <conversationId>` (ids only; the entries are in
// the store's inbox). A missed notice loses nothing: the owner drains its conversations' inboxes again when its bus
// resyncs, and a conversation whose owner is gone is taken over with its inbox (takeover.ts).
import type { ClusterBus } from '../store/repos.ts';

const INBOX_TOPIC = 'inbox';

export const notifyInbox = (bus: ClusterBus, nodeId: string, conversationId: string) => bus.publish(INBOX_TOPIC, `${nodeId} ${conversationId}`);

/** Calls `drain` for every notice addressed to this node (its id now). Returns the unsubscribe. */
export function watchInbox(bus: ClusterBus, nodeId: () => string, drain: (conversationId: string) => void): () => void {
  return bus.subscribe(INBOX_TOPIC, (payload) => {
    const space = payload.indexOf(' ');
    if (space > 0 && payload.slice(0, space) === nodeId()) drain(payload.slice(space + 1));
  });
}
