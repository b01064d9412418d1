// Which node may write a conversation, as the conversation host sees it (issue 17, part 2): this node claims a
// conversation before it activates its actor, holds the epoch the claim gave, checks it inside every write's
// transaction, and gives the conversation up when the actor is passivated. Another live node's conversation is not
// claimed: its events go to that node's inbox (host.ts).
import { StoreUnavailableError } from '../store/errors.ts';
import type { OwnershipStore, StoreRepos } from '../store/repos.ts';

export type Acquired = { epoch: number } | { heldBy: string };

export interface ConversationOwnership {
  /** This node's id now (it changes when the node rejoins after losing its lease). */
  nodeId(): string;
  /** Claims the conversation: the epoch to write with, or the live node that owns it. */
  acquire(conversationId: string): Promise<Acquired>;
  /** In a write's transaction: throws OwnershipLostError unless this node still owns it at `epoch`. */
  assert(tx: StoreRepos, conversationId: string, epoch: number): Promise<void>;
  release(conversationId: string, epoch: number): Promise<void>;
}

export function createConversationOwnership(o: { ownership: OwnershipStore; nodeId: () => string }): ConversationOwnership {
  return {
    nodeId: o.nodeId,
    async acquire(conversationId) {
      const outcome = await o.ownership.claim(conversationId, o.nodeId());
      if (outcome.claimed) return { epoch: outcome.epoch };
      if (outcome.reason === 'held' && outcome.owner?.nodeId) return { heldBy: outcome.owner.nodeId };
      // This node has no live lease (it is rejoining): like a store that cannot write, try again shortly.
      throw new StoreUnavailableError('not_member', 'this node is not a member of the cluster right now');
    },
    assert: (tx, conversationId, epoch) => tx.ownership.assertOwner(conversationId, o.nodeId(), epoch),
    async release(conversationId, epoch) {
      await o.ownership.release(conversationId, o.nodeId(), epoch);
    },
  };
}
