-- Several Parley nodes on one database (issue 17): node leases and conversation ownership (src/store/postgres/nodes.ts,
-- ownership.ts). Lease times are the database's (`now()`), so the nodes' own clocks never decide who is alive.

-- One row per node. `instance` is random per join: only the process that joined can renew. `holder` is the
-- application_name of every connection of that process's store (as for job leases, jobs.ts): a node whose
-- connections are all gone (its process died) is not alive, whatever its lease says.
CREATE TABLE nodes (
  node_id text PRIMARY KEY,
  instance text NOT NULL,
  holder text NOT NULL,
  joined_at timestamptz NOT NULL,
  renewed_at timestamptz NOT NULL,
  lease_until timestamptz NOT NULL,
  -- NodeLoad: sdkConnections, sdkFunctions, conversations (what the node reported with its last heartbeat)
  load json NOT NULL
);

CREATE VIEW parley_live_nodes AS
  SELECT n.node_id FROM nodes n
  WHERE n.lease_until > now() AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = n.holder);

-- Who may write a conversation: `epoch` (the fencing token) moves forward with every claim and is kept when the
-- conversation is released (`node_id` NULL), so an epoch is never handed out twice for a conversation.
CREATE TABLE conversation_owners (
  conversation_id text PRIMARY KEY,
  node_id text,
  epoch bigint NOT NULL,
  claimed_at timestamptz NOT NULL
);
CREATE INDEX conversation_owners_node ON conversation_owners (node_id) WHERE node_id IS NOT NULL;

-- A claim in one round trip. The upsert locks the row (a concurrent claim, or a write holding the row share-locked
-- through assertOwner, makes it wait) and evaluates its WHERE against the newest version, so of concurrent claims
-- exactly one moves the epoch. A VOLATILE function takes a new snapshot per statement: when the upsert wrote nothing,
-- the SELECT after it sees the owner that won.
CREATE FUNCTION parley_claim_conversation(conv text, claimant text)
RETURNS TABLE (owner_node text, owner_epoch bigint, outcome text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  IF NOT EXISTS (SELECT 1 FROM parley_live_nodes l WHERE l.node_id = claimant) THEN
    RETURN QUERY SELECT o.node_id, o.epoch, 'not_alive'::text FROM conversation_owners o WHERE o.conversation_id = conv;
    IF NOT FOUND THEN
      RETURN QUERY SELECT NULL::text, NULL::bigint, 'not_alive'::text;
    END IF;
    RETURN;
  END IF;
  RETURN QUERY
    INSERT INTO conversation_owners AS o (conversation_id, node_id, epoch, claimed_at) VALUES (conv, claimant, 1, now())
    ON CONFLICT (conversation_id) DO UPDATE SET node_id = claimant, epoch = o.epoch + 1, claimed_at = now()
      WHERE o.node_id IS NULL
         OR (o.node_id <> claimant AND NOT EXISTS (SELECT 1 FROM parley_live_nodes l WHERE l.node_id = o.node_id))
    RETURNING o.node_id, o.epoch, 'claimed'::text;
  IF NOT FOUND THEN
    RETURN QUERY SELECT o.node_id, o.epoch, CASE WHEN o.node_id = claimant THEN 'owned' ELSE 'held' END
      FROM conversation_owners o WHERE o.conversation_id = conv;
  END IF;
END
$$;
