// What one LLM call tells the telemetry's turn-call record (src/store/telemetry-records.ts): the provider, model,
// time and tokens of an answered call, or the error of a failed one. The caller adds whose turn it was.
import type { FailedAttempt } from './resilient.ts';
import type { LlmProvider, LlmResponse } from './types.ts';

export interface CallOutcome {
  provider: string;
  model: string;
  durationMs: number;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens?: number;
  toolCalls: string[];
  ok: boolean;
  error?: string;
}

/** An answered call; `toolCalls` are the names of the tools it asked for that the record counts. */
export function answeredCall(res: LlmResponse, toolCalls: string[]): CallOutcome {
  return {
    provider: res.provider,
    model: res.model,
    durationMs: res.durationMs,
    promptTokens: res.usage.promptTokens,
    completionTokens: res.usage.completionTokens,
    cachedPromptTokens: res.usage.cachedPromptTokens,
    toolCalls,
    ok: true,
  };
}

/** A failed attempt, as the resilient provider reports it (a retry or the fallback may follow). */
export function failedAttemptCall(a: FailedAttempt): CallOutcome {
  return { provider: a.provider, model: a.model, durationMs: a.durationMs, promptTokens: 0, completionTokens: 0, toolCalls: [], ok: false, error: a.error };
}

/** A call that failed without any attempt reported: named after the provider asked. */
export function failedCall(llm: Pick<LlmProvider, 'name' | 'model'>, durationMs: number, err: unknown): CallOutcome {
  return { provider: llm.name, model: llm.model, durationMs, promptTokens: 0, completionTokens: 0, toolCalls: [], ok: false, error: (err as Error).message };
}
