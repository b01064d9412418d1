// Telemetry records ↔ rows of telemetry_events and telemetry_turn_calls.
import type { TelemetryEvent, TurnCallRecord } from '../../telemetry/types.ts';

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
  tool_calls: string[];
  ok: boolean;
  error: string | null;
}

export const EVENT_COLUMNS = 'id, at, type, conversation_id, customer_id, customer_external_id, channel, data';
export const TURN_CALL_COLUMNS =
  'id, at, turn_id, conversation_id, customer_id, sequence, provider, model, purpose, duration_ms, prompt_tokens, completion_tokens, tool_calls, ok, error';

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
  if (r.error !== null) c.error = r.error;
  return c;
}

/** The columns of a batch of events, one array each, for `unnest` (one INSERT for the whole batch). */
export function eventColumns(events: TelemetryEvent[]): unknown[] {
  const n = events.length;
  const cols = Array.from({ length: 9 }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const e = events[i];
    cols[0][i] = e.id;
    cols[1][i] = Math.round(e.at);
    cols[2][i] = e.type;
    cols[3][i] = e.conversationId ?? null;
    cols[4][i] = e.customerId ?? null;
    cols[5][i] = e.customerExternalId ?? null;
    cols[6][i] = e.channel ?? null;
    const turnId = (e.data as { turnId?: unknown } | undefined)?.turnId;
    cols[7][i] = typeof turnId === 'string' ? turnId : null;
    cols[8][i] = JSON.stringify(e.data ?? {});
  }
  return cols;
}

export function turnCallColumns(calls: TurnCallRecord[]): unknown[] {
  const n = calls.length;
  const cols = Array.from({ length: 15 }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const c = calls[i];
    cols[0][i] = c.id;
    cols[1][i] = Math.round(c.at);
    cols[2][i] = c.turnId;
    cols[3][i] = c.conversationId;
    cols[4][i] = c.customerId;
    cols[5][i] = Math.round(c.sequence);
    cols[6][i] = c.provider;
    cols[7][i] = c.model;
    cols[8][i] = c.purpose;
    cols[9][i] = c.durationMs;
    cols[10][i] = Math.round(c.promptTokens);
    cols[11][i] = Math.round(c.completionTokens);
    cols[12][i] = JSON.stringify(c.toolCalls ?? []);
    cols[13][i] = c.ok;
    cols[14][i] = c.error ?? null;
  }
  return cols;
}
