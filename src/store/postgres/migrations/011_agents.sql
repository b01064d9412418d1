-- Agent accounts (src/agents/): people who answer customers, with their own sign-in. `email_key` is the lower-cased
-- email, unique; credentials (sessions, API keys, set-password links) are stored by the SHA-256 of their secret.
CREATE TABLE agents (
  agent_id text PRIMARY KEY,
  email_key text NOT NULL UNIQUE,
  created_at bigint NOT NULL,
  body jsonb NOT NULL
);

CREATE TABLE agent_credentials (
  hash text PRIMARY KEY,
  agent_id text NOT NULL,
  kind text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint,
  body jsonb NOT NULL
);
CREATE INDEX agent_credentials_agent ON agent_credentials (agent_id, kind, created_at);
CREATE INDEX agent_credentials_expires ON agent_credentials (expires_at) WHERE expires_at IS NOT NULL;
