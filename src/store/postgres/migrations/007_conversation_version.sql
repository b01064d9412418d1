-- A conversation's write counter, and its writer's one-round-trip write (src/store/postgres/conversations.ts,
-- `saveIfUnchanged`). Every write of the record moves `version` on; a writer that remembers the version it wrote last
-- knows, under the conversation's lock, whether anyone else wrote the record since.
ALTER TABLE conversations ADD COLUMN version bigint NOT NULL DEFAULT 1;

-- The host's write of a conversation it holds, as one statement instead of a transaction of five (BEGIN, the owner's
-- check, the lock, the save, COMMIT): the same lock and checks, in a function so that each read after the lock sees
-- every write committed before it was granted (a plain statement reads from the snapshot taken when it started).
-- NULL, with nothing written, when another writer moved the record on, the owner is not (owner_node, owner_epoch), or a
-- customer message of the batch is stored already: the caller then writes in a transaction, where each of those cases
-- has its own handling.
CREATE FUNCTION parley_save_conversation_unchanged(
  expected bigint, owner_node text, owner_epoch bigint,
  p_id text, p_customer_id text, p_external_id text, p_channel text, p_state text, p_busy boolean, p_updated_at bigint,
  p_last_message_at bigint, p_last_customer_message_at bigint, p_reviewed_at bigint, p_details json, p_snapshot json,
  p_followup_pending boolean, p_review_due_at bigint, p_handoff_since bigint,
  m_ids text[], m_roles text[], m_texts text[], m_ats bigint[], m_turn_ids text[], m_proactive boolean[], m_data json[]
) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  saved bigint;
  last_seq bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('conversation:' || p_id, 0));
  IF owner_node IS NOT NULL THEN
    PERFORM 1 FROM conversation_owners o WHERE o.conversation_id = p_id AND o.node_id = owner_node AND o.epoch = owner_epoch FOR SHARE;
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
  END IF;
  IF EXISTS (
    SELECT 1 FROM unnest(m_ids, m_roles) AS b(message_id, role)
    JOIN messages m ON m.conversation_id = p_id AND m.id = b.message_id AND m.role = 'user'
    WHERE b.role = 'user'
  ) THEN
    RETURN NULL;
  END IF;
  UPDATE conversations c SET customer_id = p_customer_id, external_id = p_external_id, channel = p_channel, state = p_state,
    busy = p_busy, updated_at = p_updated_at, last_message_at = p_last_message_at,
    last_customer_message_at = p_last_customer_message_at, reviewed_at = p_reviewed_at, details = p_details,
    snapshot = p_snapshot, followup_pending = p_followup_pending, review_due_at = p_review_due_at,
    handoff_since = p_handoff_since, version = c.version + 1
  WHERE c.conversation_id = p_id AND c.version = expected
  RETURNING c.version INTO saved;
  IF saved IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT coalesce(max(seq), 0) INTO last_seq FROM messages WHERE conversation_id = p_id;
  INSERT INTO messages (conversation_id, seq, id, role, text, at, turn_id, proactive, data)
  SELECT p_id, last_seq + m.ord, m.message_id, m.role, m.text, m.at, m.turn_id, m.proactive, m.data
  FROM unnest(m_ids, m_roles, m_texts, m_ats, m_turn_ids, m_proactive, m_data)
    WITH ORDINALITY AS m(message_id, role, text, at, turn_id, proactive, data, ord);
  RETURN saved;
END
$$;
