-- Parley's tables on PostgreSQL (13 or newer). Times are ms since the epoch (bigint). Documents Parley never
-- queries inside (XState snapshots, job payloads, telemetry data) are `json`, not `jsonb`: they are written and read
-- back whole, `json` stores the text as given (cheaper to write), and it keeps a `\u0000` escape that `jsonb` refuses.

CREATE TABLE customers (
  customer_id text PRIMARY KEY,
  external_id text NOT NULL,
  email text,
  phone text,
  bsuid text,
  created_at bigint NOT NULL,
  opt_in boolean,
  last_inbound_web bigint,
  last_inbound_whatsapp bigint
);

-- How a customer is found: kind 'ext' | 'email' (value lower-cased) | 'phone' | 'bsuid'. One owner per identity.
CREATE TABLE customer_identities (
  kind text NOT NULL,
  value text NOT NULL,
  customer_id text NOT NULL,
  PRIMARY KEY (kind, value)
);
CREATE INDEX customer_identities_customer ON customer_identities (customer_id);

CREATE TABLE conversations (
  conversation_id text PRIMARY KEY,
  customer_id text NOT NULL,
  external_id text,
  channel text NOT NULL,
  state text NOT NULL,
  busy boolean NOT NULL,
  updated_at bigint NOT NULL,
  last_message_at bigint,
  last_customer_message_at bigint,
  reviewed_at bigint,
  -- When the reflection daemon is due to review it (model.ts reviewDueAt, set on every write): its last message's
  -- time while that has no verdict and the daemon has not given up on it.
  review_due_at bigint,
  followup_pending boolean NOT NULL,
  snapshot json,
  -- pendingConfirmation, reflection, followupPending, reviewAttempt
  details json NOT NULL
);
-- The reflection daemon's work list.
CREATE INDEX conversations_due_for_review ON conversations (review_due_at, conversation_id) WHERE review_due_at IS NOT NULL;
CREATE INDEX conversations_busy ON conversations (conversation_id) WHERE busy;
CREATE INDEX conversations_followup_pending ON conversations (conversation_id) WHERE followup_pending;
CREATE INDEX conversations_recent ON conversations ((coalesce(last_message_at, updated_at)) DESC);
CREATE INDEX conversations_customer ON conversations (customer_id);

-- A conversation's `lock`: a transaction-scoped advisory lock on its id (held even before the row exists), then the
-- row. A VOLATILE function takes a new snapshot for each statement at READ COMMITTED, so the SELECT sees every
-- write committed before the lock was granted: one round trip instead of two.
CREATE FUNCTION parley_lock_conversation(id text) RETURNS SETOF conversations
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('conversation:' || id, 0));
  RETURN QUERY SELECT * FROM conversations WHERE conversation_id = id;
END
$$;

CREATE TABLE messages (
  conversation_id text NOT NULL,
  seq bigint NOT NULL,
  id text NOT NULL,
  role text NOT NULL,
  text text NOT NULL,
  at bigint NOT NULL,
  turn_id text,
  proactive boolean,
  data json,
  PRIMARY KEY (conversation_id, seq)
);
-- `seen`: customer messages by their client id. Not unique: the other roles' ids may repeat (an offline model's
-- tool call ids restart with the process), and a customer message is checked with `seen` before it is appended.
CREATE INDEX messages_customer_ids ON messages (conversation_id, id) WHERE role = 'user';

CREATE TABLE magic_links (
  token_hash text PRIMARY KEY,
  email text NOT NULL,
  external_id text NOT NULL,
  expires_at bigint NOT NULL,
  used_at bigint
);
CREATE INDEX magic_links_expires ON magic_links (expires_at);

CREATE TABLE proactive_sends (
  customer_id text NOT NULL,
  at bigint NOT NULL,
  message_id text NOT NULL,
  channel text NOT NULL,
  PRIMARY KEY (customer_id, at, message_id)
);
CREATE INDEX proactive_sends_at ON proactive_sends (at);

CREATE TABLE proactive_dedup (
  customer_id text NOT NULL,
  dedup_key text NOT NULL,
  sent_at bigint NOT NULL,
  message_id text NOT NULL,
  PRIMARY KEY (customer_id, dedup_key)
);
CREATE INDEX proactive_dedup_sent_at ON proactive_dedup (sent_at);

-- Job sequence numbers: one sequence for every queue (increasing per queue, never reused, with gaps).
CREATE SEQUENCE job_seq AS bigint;

CREATE TABLE jobs (
  queue text NOT NULL,
  seq bigint NOT NULL,
  id text NOT NULL,
  key text NOT NULL,
  payload json NOT NULL,
  attempts integer NOT NULL,
  run_at bigint NOT NULL,
  enqueued_at bigint NOT NULL,
  last_error text,
  PRIMARY KEY (queue, seq)
);

-- Every known job id of a queue: a queued job's (seq set), or a finished one kept as a tombstone (done_at set)
-- until `prune`. The primary key is what refuses a known id, also between concurrent inserts.
CREATE TABLE job_ids (
  queue text NOT NULL,
  id text NOT NULL,
  seq bigint,
  done_at bigint,
  PRIMARY KEY (queue, id)
);
CREATE INDEX job_ids_done ON job_ids (queue, done_at) WHERE done_at IS NOT NULL;

CREATE TABLE job_dead_letters (
  queue text NOT NULL,
  seq bigint NOT NULL,
  id text NOT NULL,
  key text NOT NULL,
  payload json NOT NULL,
  attempts integer NOT NULL,
  run_at bigint NOT NULL,
  enqueued_at bigint NOT NULL,
  last_error text,
  failed_at bigint NOT NULL,
  error text NOT NULL,
  PRIMARY KEY (queue, seq)
);
CREATE INDEX job_dead_letters_failed ON job_dead_letters (queue, failed_at);

CREATE TABLE wa_deliveries (
  provider_message_id text PRIMARY KEY,
  job_id text NOT NULL,
  source_id text NOT NULL,
  customer_id text NOT NULL,
  conversation_id text,
  to_number text NOT NULL,
  status text NOT NULL,
  sent_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  errors json
);
CREATE INDEX wa_deliveries_updated ON wa_deliveries (updated_at);

CREATE TABLE wa_early_statuses (
  provider_message_id text PRIMARY KEY,
  status text NOT NULL,
  at bigint NOT NULL,
  errors json
);
CREATE INDEX wa_early_statuses_at ON wa_early_statuses (at);

CREATE TABLE wa_sent (
  job_id text PRIMARY KEY,
  provider_message_id text NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX wa_sent_at ON wa_sent (at);

CREATE TABLE wa_send_attempts (
  job_id text PRIMARY KEY,
  started_at bigint NOT NULL
);

CREATE TABLE wa_handled (
  wa_message_id text PRIMARY KEY,
  at bigint NOT NULL
);
CREATE INDEX wa_handled_at ON wa_handled (at);

-- Telemetry: `id` is the recorder's time-ordered id (byte order, hence COLLATE "C"); pages are in id order.
CREATE TABLE telemetry_events (
  id text COLLATE "C" PRIMARY KEY,
  at bigint NOT NULL,
  type text NOT NULL,
  conversation_id text,
  customer_id text,
  customer_external_id text,
  channel text,
  turn_id text,
  data json NOT NULL
);
CREATE INDEX telemetry_events_at ON telemetry_events (at);
CREATE INDEX telemetry_events_conversation ON telemetry_events (conversation_id, id) WHERE conversation_id IS NOT NULL;
CREATE INDEX telemetry_events_customer ON telemetry_events (customer_id, id) WHERE customer_id IS NOT NULL;
CREATE INDEX telemetry_events_customer_external ON telemetry_events (customer_external_id, id) WHERE customer_external_id IS NOT NULL;

CREATE TABLE telemetry_turn_calls (
  id text COLLATE "C" PRIMARY KEY,
  at bigint NOT NULL,
  turn_id text NOT NULL,
  conversation_id text NOT NULL,
  customer_id text NOT NULL,
  sequence integer NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  purpose text NOT NULL,
  duration_ms double precision NOT NULL,
  prompt_tokens integer NOT NULL,
  completion_tokens integer NOT NULL,
  tool_calls json NOT NULL,
  ok boolean NOT NULL,
  error text
);
CREATE INDEX telemetry_turn_calls_at ON telemetry_turn_calls (at);
CREATE INDEX telemetry_turn_calls_conversation ON telemetry_turn_calls (conversation_id, id);
CREATE INDEX telemetry_turn_calls_customer ON telemetry_turn_calls (customer_id, id);
