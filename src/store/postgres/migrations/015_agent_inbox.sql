-- The agent inbox (src/inbox/, issue 35): who holds a handed-over conversation (a compare-and-set on one row per
-- conversation), resolutions, internal notes only agents see, team-wide saved replies, and each agent's read marks.
CREATE TABLE inbox_threads (
  conversation_id text PRIMARY KEY,
  handoff_since bigint NOT NULL,
  holder_id text,
  resolved_at bigint,
  body jsonb NOT NULL
);
CREATE INDEX inbox_threads_resolved ON inbox_threads (resolved_at DESC, conversation_id DESC) WHERE resolved_at IS NOT NULL;

CREATE TABLE inbox_notes (
  id text PRIMARY KEY,
  conversation_id text NOT NULL,
  at bigint NOT NULL,
  body jsonb NOT NULL
);
CREATE INDEX inbox_notes_conversation ON inbox_notes (conversation_id, at, id);

CREATE TABLE saved_replies (
  id text PRIMARY KEY,
  shortcut text NOT NULL UNIQUE,
  body jsonb NOT NULL
);

CREATE TABLE inbox_reads (
  agent_id text NOT NULL,
  conversation_id text NOT NULL,
  at bigint NOT NULL,
  PRIMARY KEY (agent_id, conversation_id)
);
