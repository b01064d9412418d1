// Telemetry records as the store keeps them (events and LLM calls), and their ids: `<13-digit ms>-<8-digit seq>`,
// so ids sort by the time a fact happened, on every engine. The recorder that makes them is src/telemetry/; its
// interface (`Telemetry`) is in src/services.ts.

export interface TelemetryEvent {
  id: string;
  at: number;
  type: string;
  conversationId?: string;
  customerId?: string;
  customerExternalId?: string;
  channel?: string;
  data: Record<string, unknown>;
}

export interface TurnCallRecord {
  id: string;
  turnId: string;
  conversationId: string;
  customerId: string;
  sequence: number;
  at: number;
  provider: string;
  model: string;
  purpose: 'chat' | 'reflection' | string;
  durationMs: number;
  promptTokens: number;
  completionTokens: number;
  /** The part of `promptTokens` the provider read from its prompt cache, when it says. */
  cachedPromptTokens?: number;
  /** What the call cost, in the configured currency (`llm.prices`); absent when its model has no price. */
  cost?: number;
  toolCalls: string[];
  ok: boolean;
  error?: string;
}

/** Sortable id: 13-digit ms timestamp, then a sequence. */
export function timeOrderedId(at: number, seq: number): string {
  // 13 digits of ms cover years 2001–2286 without padding; pad only the sequence.
  const ms = Math.max(0, Math.floor(at));
  return `${ms >= 1e12 ? ms : String(ms).padStart(13, '0')}-${String(seq % 1e8).padStart(8, '0')}`;
}

/** The first possible key at or after `at` (ms). */
export const keyAt = (at: number) => `${String(Math.max(0, Math.floor(at))).padStart(13, '0')}-`;

/** The ms part of an id or segment key. */
export const msOf = (id: string) => Number(id.slice(0, id.indexOf('-')));
