import type { Config } from '../config/schema.ts';
import { createOfflineProvider } from './offline.ts';
import { createOpenAiProvider } from './openai.ts';
import { createResilientLlm, type ResilientLlm } from './resilient.ts';
import type { LlmProvider } from './types.ts';

type ProviderConfig = { provider: 'offline' | 'openai'; model: string; base_url?: string; api_key: string };

function build(c: ProviderConfig, llm: Config['llm'], sleep?: (ms: number) => Promise<void>): LlmProvider {
  if (c.provider === 'offline')
    return createOfflineProvider(c.model.startsWith('offline') ? c.model : 'offline-1', { delayMs: llm.offline_delta_delay_ms, sleep });
  // One attempt per call: the resilient wrapper retries (counted, and followed by the fallback).
  return createOpenAiProvider({
    model: c.model,
    baseUrl: c.base_url,
    apiKey: c.api_key,
    timeoutMs: llm.timeout_ms,
    temperature: llm.temperature,
  });
}

export function createLlmFromConfig(
  llm: Config['llm'],
  o: { now?: () => number; sleep?: (ms: number) => Promise<void> } & Pick<
    Parameters<typeof createResilientLlm>[0],
    'onAttemptFailed' | 'onAttemptSucceeded'
  > = {},
): ResilientLlm {
  const primary = build(llm, llm, o.sleep);
  const fallback = llm.fallback ? build(llm.fallback, llm, o.sleep) : undefined;
  return createResilientLlm({
    primary,
    fallback,
    retries: llm.provider === 'offline' ? 0 : llm.max_retries,
    now: o.now,
    onAttemptFailed: o.onAttemptFailed,
    onAttemptSucceeded: o.onAttemptSucceeded,
  });
}
