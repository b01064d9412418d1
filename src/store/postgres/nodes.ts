// Node leases on PostgreSQL (migration 005): one row per node, its lease measured in the database's time. A node is
// alive while its lease holds and its store still has a connection open (`parley_live_nodes`, as for job leases).
import type { NodeLoad, NodeStore, NodeView } from '../repos.ts';
import { json, prepared, type Db } from './db.ts';

interface NodeRow {
  node_id: string;
  lease_age_ms: number;
  lease_left_ms: number;
  alive: boolean;
  joined_at: number;
  load: NodeLoad;
}

const LEASE_END = `now() + $3 * interval '1 millisecond'`;

// A row is taken over only from an instance that is no longer alive. A join starts a new incarnation of the id:
// whatever the id owned before is released (its epochs kept), so a paused earlier incarnation that wakes up can no
// longer write as the owner of those conversations.
const JOIN = prepared(
  'nodes_join',
  `WITH joined AS (
     INSERT INTO nodes AS n (node_id, instance, holder, joined_at, renewed_at, lease_until, load)
     VALUES ($1, $2, $4, now(), now(), ${LEASE_END}, $5)
     ON CONFLICT (node_id) DO UPDATE SET instance = EXCLUDED.instance, holder = EXCLUDED.holder, joined_at = now(),
       renewed_at = now(), lease_until = EXCLUDED.lease_until, load = EXCLUDED.load
       WHERE n.instance = EXCLUDED.instance OR NOT EXISTS (SELECT 1 FROM parley_live_nodes l WHERE l.node_id = n.node_id)
     RETURNING node_id
   ), freed AS (
     UPDATE conversation_owners SET node_id = NULL WHERE node_id IN (SELECT node_id FROM joined) RETURNING 1
   )
   SELECT (SELECT count(*) FROM joined) AS n`,
);
const RENEW = prepared(
  'nodes_renew',
  `UPDATE nodes SET renewed_at = now(), lease_until = ${LEASE_END}, load = $4
   WHERE node_id = $1 AND instance = $2 AND lease_until > now() RETURNING 1`,
);
const LIST = prepared(
  'nodes_list',
  `SELECT n.node_id,
          floor(extract(epoch FROM now() - n.renewed_at) * 1000)::bigint AS lease_age_ms,
          greatest(0, ceil(extract(epoch FROM n.lease_until - now()) * 1000))::bigint AS lease_left_ms,
          EXISTS (SELECT 1 FROM parley_live_nodes l WHERE l.node_id = n.node_id) AS alive,
          floor(extract(epoch FROM n.joined_at) * 1000)::bigint AS joined_at,
          n.load
   FROM nodes n ORDER BY n.node_id`,
);
const LEAVE = prepared(
  'nodes_leave',
  `WITH gone AS (DELETE FROM nodes WHERE node_id = $1 AND instance = $2 RETURNING node_id)
   UPDATE conversation_owners SET node_id = NULL WHERE node_id IN (SELECT node_id FROM gone)`,
);
const PRUNE = prepared(
  'nodes_prune',
  `WITH gone AS (DELETE FROM nodes WHERE lease_until < now() - $1 * interval '1 millisecond' RETURNING 1) SELECT count(*) AS n FROM gone`,
);

const view = (r: NodeRow): NodeView => ({
  nodeId: r.node_id,
  leaseAgeMs: r.lease_age_ms,
  leaseLeftMs: r.lease_left_ms,
  alive: r.alive,
  joinedAt: r.joined_at,
  load: r.load,
});

/** `holder`: the application_name of this store's connections. */
export function postgresNodes(db: Db, holder: string): NodeStore {
  return {
    join: async (l) => (await db.rows<{ n: number }>(JOIN, [l.nodeId, l.instance, l.leaseMs, holder, json(l.load)]))[0].n > 0,
    renew: async (l) => (await db.rows(RENEW, [l.nodeId, l.instance, l.leaseMs, json(l.load)])).length > 0,
    list: async () => (await db.rows<NodeRow>(LIST, [])).map(view),
    leave: async (nodeId, instance) => {
      await db.rows(LEAVE, [nodeId, instance]);
    },
    prune: async (olderThanMs) => (await db.rows<{ n: number }>(PRUNE, [olderThanMs]))[0].n,
  };
}
