-- Conversation outcomes (issue 39, docs/outcomes.md): one row per conversation, its record as a JSON document beside
-- the columns it is looked up by. `decide_at` is set while the episode is open (the sweep's work list).
CREATE TABLE conversation_outcomes (
  conversation_id text PRIMARY KEY,
  customer_id text NOT NULL,
  channel text NOT NULL,
  status text NOT NULL,
  started_at bigint NOT NULL,
  decide_at bigint,
  body jsonb NOT NULL
);
CREATE INDEX conversation_outcomes_due ON conversation_outcomes (decide_at) WHERE decide_at IS NOT NULL;
CREATE INDEX conversation_outcomes_started ON conversation_outcomes (started_at DESC, conversation_id DESC);
