// Conversation ownership on PostgreSQL (migration 005): `conversation_owners` holds each conversation's owner and
// epoch. A claim is one call of `parley_claim_conversation` (an upsert that locks the row); a write's check is a
// `SELECT … FOR SHARE` of the row with the epoch it holds, in the write's own transaction: a claim cannot move the
// epoch while the write is open, and a write after a claim re-reads the new row version (READ COMMITTED) and fails.
import { OwnershipLostError } from '../errors.ts';
import type { ClaimOutcome, ConversationOwner, OrphanedConversation, OwnershipStore } from '../repos.ts';
import { first, limitOf, prepared, type Db } from './db.ts';

const CLAIM = prepared('owners_claim', 'SELECT owner_node, owner_epoch, outcome FROM parley_claim_conversation($1, $2)');
const OWNER = prepared('owners_get', 'SELECT node_id, epoch FROM conversation_owners WHERE conversation_id = $1');
const ASSERT = prepared('owners_assert', 'SELECT 1 FROM conversation_owners WHERE conversation_id = $1 AND node_id = $2 AND epoch = $3 FOR SHARE');
const ORPHANED = prepared(
  'owners_orphaned',
  `SELECT o.conversation_id, o.node_id, o.epoch, coalesce(c.busy OR c.followup_pending, false) AS waiting
   FROM conversation_owners o LEFT JOIN conversations c ON c.conversation_id = o.conversation_id
   WHERE (o.node_id IS NOT NULL AND o.node_id NOT IN (SELECT node_id FROM parley_live_nodes))
      OR (o.node_id IS NULL AND (c.busy OR c.followup_pending))
   ORDER BY waiting DESC, o.conversation_id
   LIMIT $1`,
);
const WAITING_ON = prepared(
  'owners_waiting_on',
  `SELECT o.conversation_id FROM conversation_owners o LEFT JOIN conversations c ON c.conversation_id = o.conversation_id
   WHERE o.node_id = $1
     AND (coalesce(c.busy OR c.followup_pending, false) OR EXISTS (SELECT 1 FROM conversation_inbox i WHERE i.conversation_id = o.conversation_id))
   ORDER BY o.conversation_id LIMIT $2`,
);
const RELEASE = prepared(
  'owners_release',
  'UPDATE conversation_owners SET node_id = NULL WHERE conversation_id = $1 AND node_id = $2 AND epoch = $3 RETURNING 1',
);
const COUNT = prepared(
  'owners_count',
  `SELECT node_id, count(*) AS n FROM conversation_owners WHERE node_id IN (SELECT node_id FROM parley_live_nodes) GROUP BY node_id`,
);

export function postgresOwnership(db: Db): OwnershipStore {
  const owner = async (conversationId: string): Promise<ConversationOwner | undefined> => {
    const row = await first(db.rows<{ node_id: string | null; epoch: number }>(OWNER, [conversationId]));
    return row ? { nodeId: row.node_id, epoch: row.epoch } : undefined;
  };
  return {
    claim: async (conversationId, nodeId): Promise<ClaimOutcome> => {
      const [row] = await db.rows<{ owner_node: string | null; owner_epoch: number | null; outcome: string }>(CLAIM, [conversationId, nodeId]);
      if (row.outcome === 'claimed' || row.outcome === 'owned') return { claimed: true, epoch: row.owner_epoch! };
      const current = row.owner_epoch === null ? undefined : { nodeId: row.owner_node, epoch: row.owner_epoch };
      return row.outcome === 'held' ? { claimed: false, reason: 'held', owner: current } : { claimed: false, reason: 'not_alive', owner: current };
    },
    owner,
    assertOwner: async (conversationId, nodeId, epoch) => {
      if ((await db.rows(ASSERT, [conversationId, nodeId, epoch])).length > 0) return;
      throw new OwnershipLostError(conversationId, nodeId, epoch, await owner(conversationId));
    },
    orphaned: async (limit) =>
      (await db.rows<{ conversation_id: string; node_id: string | null; epoch: number; waiting: boolean }>(ORPHANED, [limitOf(limit)])).map(
        (r): OrphanedConversation => ({ conversationId: r.conversation_id, nodeId: r.node_id, epoch: r.epoch, waiting: r.waiting }),
      ),
    waitingOn: async (nodeId, limit) => (await db.rows<{ conversation_id: string }>(WAITING_ON, [nodeId, limitOf(limit)])).map((r) => r.conversation_id),
    release: async (conversationId, nodeId, epoch) => (await db.rows(RELEASE, [conversationId, nodeId, epoch])).length > 0,
    countByNode: async () => Object.fromEntries((await db.rows<{ node_id: string; n: number }>(COUNT, [])).map((r) => [r.node_id, r.n])),
  };
}
