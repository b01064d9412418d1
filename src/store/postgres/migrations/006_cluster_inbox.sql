-- Several nodes, part 2 (issue 17): the durable inbox of conversations owned by another node, and the payloads of bus
-- notices too long for a NOTIFY (src/store/postgres/inbox.ts, bus.ts).

-- An event that reached a node which does not own its conversation. The owner removes it in the transaction that
-- stores what it carried; a conversation with entries and no live owner is claimed by a live node.
CREATE TABLE conversation_inbox (
  id bigserial PRIMARY KEY,
  conversation_id text NOT NULL,
  event json NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX conversation_inbox_conversation ON conversation_inbox (conversation_id, id);

-- A bus payload over the NOTIFY limit: the notice carries its id. Read by every listening node, so not removed on
-- reading; rows older than a minute are pruned.
CREATE TABLE bus_payloads (
  id bigserial PRIMARY KEY,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bus_payloads_created ON bus_payloads (created_at);
