-- What each LLM call cost (README, "What it cost"): the part of its prompt the provider read from its cache, and its
-- cost in the configured currency, computed from `llm.prices` when the call was recorded. NULL: not reported / no price.
ALTER TABLE telemetry_turn_calls ADD COLUMN cached_prompt_tokens integer, ADD COLUMN cost double precision;
