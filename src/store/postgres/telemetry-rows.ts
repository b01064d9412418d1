// Telemetry records ↔ rows of telemetry_events and telemetry_turn_calls.
import type { TelemetryEvent, TurnCallRecord } from '../telemetry-records.ts';

export interface EventRow {
  id: string;
  at: number;
  type: string;
  conversation_id: string | null;
  customer_id: string | null;
  customer_external_id: string | null;
  channel: string | null;
  data: Record<string, unknown>;
}

export interface TurnCallRow {
  id: string;
  at: number;
  turn_id: string;
  conversation_id: string;
  customer_id: string;
  sequence: number;
  provider: string;
  model: string;
  purpose: string;
  duration_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_prompt_tokens: number | null;
  cost: number | null;
  tool_calls: string[];
  ok: boolean;
  error: string | null;
}

export const EVENT_COLUMNS = 'id, at, type, conversation_id, customer_id, customer_external_id, channel, data';
export const TURN_CALL_COLUMNS =
  'id, at, turn_id, conversation_id, customer_id, sequence, provider, model, purpose, duration_ms, prompt_tokens, completion_tokens, cached_prompt_tokens, cost, tool_calls, ok, error';

export function toEvent(r: EventRow): TelemetryEvent {
  const e: TelemetryEvent = { id: r.id, at: r.at, type: r.type, data: r.data };
  if (r.conversation_id !== null) e.conversationId = r.conversation_id;
  if (r.customer_id !== null) e.customerId = r.customer_id;
  if (r.customer_external_id !== null) e.customerExternalId = r.customer_external_id;
  if (r.channel !== null) e.channel = r.channel;
  return e;
}

export function toTurnCall(r: TurnCallRow): TurnCallRecord {
  const c: TurnCallRecord = {
    id: r.id,
    turnId: r.turn_id,
    conversationId: r.conversation_id,
    customerId: r.customer_id,
    sequence: r.sequence,
    at: r.at,
    provider: r.provider,
    model: r.model,
    purpose: r.purpose,
    durationMs: r.duration_ms,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    toolCalls: r.tool_calls,
    ok: r.ok,
  };
  if (r.cached_prompt_tokens !== null) c.cachedPromptTokens = r.cached_prompt_tokens;
  if (r.cost !== null) c.cost = r.cost;
  if (r.error !== null) c.error = r.error;
  return c;
}

/**
 * A batch as one JSON document for `json_to_recordset` (one INSERT for the whole batch). One JSON.stringify of the
 * batch costs ~2 µs per event; a text array per column, which node-postgres escapes element by element, cost ~6.
 * U+0000 becomes U+FFFD: PostgreSQL's text cannot hold it, and one such record would fail its whole batch.
 */
export function eventsJson(events: TelemetryEvent[]): string {
  return withoutNul(
    JSON.stringify(
      events.map((e) => {
        const turnId = (e.data as { turnId?: unknown } | undefined)?.turnId;
        return {
          id: e.id,
          at: Math.round(e.at),
          type: e.type,
          conversation_id: e.conversationId ?? null,
          customer_id: e.customerId ?? null,
          customer_external_id: e.customerExternalId ?? null,
          channel: e.channel ?? null,
          turn_id: typeof turnId === 'string' ? turnId : null,
          data: e.data ?? {},
        };
      }),
    ),
  );
}

export function turnCallsJson(calls: TurnCallRecord[]): string {
  return withoutNul(
    JSON.stringify(
      calls.map((c) => ({
        id: c.id,
        at: Math.round(c.at),
        turn_id: c.turnId,
        conversation_id: c.conversationId,
        customer_id: c.customerId,
        sequence: Math.round(c.sequence),
        provider: c.provider,
        model: c.model,
        purpose: c.purpose,
        duration_ms: c.durationMs,
        prompt_tokens: Math.round(c.promptTokens),
        completion_tokens: Math.round(c.completionTokens),
        cached_prompt_tokens: c.cachedPromptTokens === undefined ? null : Math.round(c.cachedPromptTokens),
        cost: c.cost ?? null,
        tool_calls: c.toolCalls ?? [],
        ok: c.ok,
        error: c.error ?? null,
      })),
    ),
  );
}

/** `\u0000` escapes in JSON text (not an escaped backslash followed by "u0000") → `\ufffd`. */
const withoutNul = (json: string) => (json.includes('\\u0000') ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : json);
