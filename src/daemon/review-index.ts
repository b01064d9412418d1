// What the daemon must look at, so a cycle reads a few index keys instead of
// decoding every conversation record (each carries an XState snapshot). In the
// `proactive` table (the ledger's prune touches only its 'dedup'/'sent' keys):
//
//   ['review', lastMessageAt, conversationId] → 1   the conversation's last message has no verdict yet
//   ['followup', conversationId]              → 1   a follow-up decided and not yet settled
//
// The conversation host writes the 'review' key in the transaction that sets
// lastMessageAt (noteLastMessageInTx); the daemon removes it when it stores the
// verdict, and drops entries it finds stale. The daemon owns the 'followup' keys.
import type { Key, Store, Table } from '../store/types.ts';

export const reviewKey = (lastMessageAt: number, conversationId: string): Key => ['review', lastMessageAt, conversationId];
export const followupKey = (conversationId: string): Key => ['followup', conversationId];

const table = (store: Store): Table<1> => store.table<1>('proactive');

/** Inside the transaction that writes the conversation record: keep its 'review' key in step with lastMessageAt. */
export function noteLastMessageInTx(store: Store, conversationId: string, previousAt: number | undefined, at: number | undefined): void {
  if (previousAt === at) return;
  const t = table(store);
  if (previousAt !== undefined) t.removeInTx(reviewKey(previousAt, conversationId));
  if (at !== undefined) t.putInTx(reviewKey(at, conversationId), 1);
}

export function createReviewIndex(store: Store) {
  const t = table(store);
  return {
    /** Conversations whose last message is at or before `cutoff`, oldest first. */
    *due(cutoff: number): Iterable<{ conversationId: string; lastMessageAt: number }> {
      for (const { key } of t.range({ start: ['review'], end: ['review', cutoff, '\uffff'] })) {
        const [, lastMessageAt, conversationId] = key as [string, number, string];
        yield { conversationId, lastMessageAt };
      }
    },
    *pendingFollowups(): Iterable<string> {
      for (const { key } of t.range({ start: ['followup'], end: ['followup', '\uffff'] })) yield (key as [string, string])[1];
    },
    removeReviewInTx: (lastMessageAt: number, conversationId: string) => t.removeInTx(reviewKey(lastMessageAt, conversationId)),
    putReviewInTx: (lastMessageAt: number, conversationId: string) => t.putInTx(reviewKey(lastMessageAt, conversationId), 1),
    putFollowupInTx: (conversationId: string) => t.putInTx(followupKey(conversationId), 1),
    removeFollowupInTx: (conversationId: string) => t.removeInTx(followupKey(conversationId)),
  };
}
