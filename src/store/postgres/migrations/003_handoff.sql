-- Human handoff (issue 19): the agent inbox lists conversations a person has, most recently handed over first.
-- `handoff_since` mirrors `details.handoff.since` (set on every write, NULL when the assistant has the conversation).
ALTER TABLE conversations ADD COLUMN handoff_since bigint;
CREATE INDEX conversations_with_human ON conversations (handoff_since DESC, conversation_id DESC) WHERE handoff_since IS NOT NULL;
