// Issue 39 part 3: the prompt tokens OpenAI read from its cache (`usage.prompt_tokens_details.cached_tokens`) reach the
// provider's answer, streamed or not; the real `openai` client against the local fake, and the recorder prices them.
import { afterEach, describe, expect, it } from 'vitest';
import { createClock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import { createOpenAiProvider } from '../../src/llm/openai.ts';
import { createTelemetryRecorder } from '../../src/telemetry/recorder.ts';
import type { TurnCallRecord } from '../../src/telemetry/types.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { openTestStore } from '../support/store.ts';

let fake: FakeOpenAi;
afterEach(async () => fake?.close());

const ask = () =>
  createOpenAiProvider({ model: 'gpt-x', baseUrl: fake.url, apiKey: 'k', timeoutMs: 5000 }).complete({
    purpose: 'chat',
    tools: [],
    messages: [{ role: 'user', content: 'hello' }],
  });

describe('cached prompt tokens', () => {
  it('are read from the usage of a streamed answer and of a whole one; none reported, none given', async () => {
    fake = await startFakeOpenAi();
    fake.script(
      { text: 'Hi.', usage: { prompt: 1200, completion: 300, cached: 1024 } },
      { text: 'Hi.', usage: { prompt: 1200, completion: 300, cached: 200 }, ignoreStream: true },
      { text: 'Hi.', usage: { prompt: 90, completion: 10 } },
    );
    expect((await ask()).usage).toEqual({ promptTokens: 1200, completionTokens: 300, cachedPromptTokens: 1024 });
    expect((await ask()).usage).toEqual({ promptTokens: 1200, completionTokens: 300, cachedPromptTokens: 200 });
    expect((await ask()).usage).toEqual({ promptTokens: 90, completionTokens: 10 });
  });

  it('are priced at cached_prompt (prompt when it has none): a known number of tokens at a known price is exact', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: 'Hi.', model: 'gpt-x-2026-01-01', usage: { prompt: 1200, completion: 300, cached: 200 } });
    const res = await ask();
    const store = await openTestStore();
    try {
      const seen: TurnCallRecord[] = [];
      const prices = { 'gpt-x': { prompt: 2.5, cached_prompt: 1.25, completion: 10 }, 'gpt-y': { prompt: 3, completion: 12 } };
      const telemetry = createTelemetryRecorder({ store, clock: createClock(), logger: createLogger('silent'), prices });
      telemetry.subscribe({ turnCall: (c) => void seen.push(c) });
      const base = { turnId: 't', conversationId: 'c', customerId: 'u', sequence: 1, purpose: 'chat', durationMs: 1, toolCalls: [], ok: true };
      const usage = { promptTokens: res.usage.promptTokens, completionTokens: res.usage.completionTokens, cachedPromptTokens: res.usage.cachedPromptTokens };
      telemetry.turnCall(Object.assign({ provider: 'openai', model: res.model }, usage, base));
      telemetry.turnCall(Object.assign({ provider: 'openai', model: 'gpt-y' }, usage, base));
      telemetry.turnCall(Object.assign({ provider: 'openai', model: 'gpt-z' }, usage, base));
      // (1000 × 2.5 + 200 × 1.25 + 300 × 10) / 1e6; then 1200 × 3 + 300 × 12; then no price.
      expect(seen.map((c) => c.cost)).toEqual([0.00575, 0.0072, undefined]);
      await telemetry.close();
    } finally {
      await store.close();
    }
  });
});
