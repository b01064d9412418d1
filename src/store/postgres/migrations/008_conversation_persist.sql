-- The host's one-statement write of a conversation it holds (src/store/postgres/conversations.ts, `persist` and
-- `saveIfUnchanged`), as 007's parley_save_conversation_unchanged, with its arguments as one JSON document instead of
-- 25 positional parameters: the record's columns by name, the expected version, the owner, and the new history
-- records as an array of objects (a field left out is NULL). The three JSON values stored as they are come beside it,
-- not in it: the snapshot, the details, and each record's data (in the records' order). They may hold a \u0000 escape
-- (a customer's text), which PostgreSQL's JSON functions refuse anywhere in a document they take apart, while a json
-- column stores it as is. The same lock and checks, in the same order; NULL, with
-- nothing written, when another writer moved the record on, the owner is not (owner_node, owner_epoch), or a customer
-- message of the batch is stored already: the caller then writes in a transaction. 007's function stays for nodes of
-- the previous build during a rolling restart.
CREATE FUNCTION parley_persist_conversation(p json, p_snapshot json, p_details json, m_data json[]) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  p_id text := p->>'conversation_id';
  saved bigint;
  last_seq bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('conversation:' || p_id, 0));
  IF p->>'owner_node' IS NOT NULL THEN
    PERFORM 1 FROM conversation_owners o
    WHERE o.conversation_id = p_id AND o.node_id = p->>'owner_node' AND o.epoch = (p->>'owner_epoch')::bigint FOR SHARE;
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
  END IF;
  IF EXISTS (
    SELECT 1 FROM json_to_recordset(p->'messages') AS b(id text, role text)
    JOIN messages m ON m.conversation_id = p_id AND m.id = b.id AND m.role = 'user'
    WHERE b.role = 'user'
  ) THEN
    RETURN NULL;
  END IF;
  UPDATE conversations c SET customer_id = p->>'customer_id', external_id = p->>'external_id', channel = p->>'channel',
    state = p->>'state', busy = (p->>'busy')::boolean, updated_at = (p->>'updated_at')::bigint,
    last_message_at = (p->>'last_message_at')::bigint, last_customer_message_at = (p->>'last_customer_message_at')::bigint,
    reviewed_at = (p->>'reviewed_at')::bigint, details = p_details, snapshot = p_snapshot,
    followup_pending = (p->>'followup_pending')::boolean, review_due_at = (p->>'review_due_at')::bigint,
    handoff_since = (p->>'handoff_since')::bigint, version = c.version + 1
  WHERE c.conversation_id = p_id AND c.version = (p->>'expected')::bigint
  RETURNING c.version INTO saved;
  IF saved IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT coalesce(max(seq), 0) INTO last_seq FROM messages WHERE conversation_id = p_id;
  INSERT INTO messages (conversation_id, seq, id, role, text, at, turn_id, proactive, data)
  SELECT p_id, last_seq + m.ord, m.id, m.role, m.text, m.at, m.turn_id, m.proactive, m_data[m.ord::int]
  FROM ROWS FROM (json_to_recordset(p->'messages') AS (id text, role text, text text, at bigint, turn_id text, proactive boolean))
    WITH ORDINALITY AS m(id, role, text, at, turn_id, proactive, ord);
  RETURN saved;
END
$$;
