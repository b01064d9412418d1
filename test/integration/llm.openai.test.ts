// The real `openai` client against the local OpenAI-compatible fake.
import { afterEach, describe, expect, it } from 'vitest';
import { createOfflineProvider } from '../../src/llm/offline.ts';
import { createOpenAiProvider } from '../../src/llm/openai.ts';
import { createResilientLlm } from '../../src/llm/resilient.ts';
import { LlmError, type ToolSpec } from '../../src/llm/types.ts';
import { ORDER_STATUS_TOOL, startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';

const tools: ToolSpec[] = [ORDER_STATUS_TOOL];
let fake: FakeOpenAi;
afterEach(async () => fake?.close());

const provider = (timeoutMs = 2000) => createOpenAiProvider({ model: 'fake-1', baseUrl: fake.url, apiKey: 'k', timeoutMs });

describe('openai provider', () => {
  it('sends tools as JSON Schemas and maps tool calls and results both ways', async () => {
    fake = await startFakeOpenAi();
    fake.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] }, { text: 'It shipped.' });
    const llm = provider();
    const first = await llm.complete({
      purpose: 'chat',
      tools,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'status 1001' },
      ],
    });
    expect(first.toolCalls).toEqual([{ id: expect.any(String), name: 'getOrderStatus', args: { orderId: '1001' } }]);
    expect(first.usage).toEqual({ promptTokens: 22, completionTokens: 7 });
    expect(fake.requests[0].tools).toEqual([{ type: 'function', function: tools[0] }]);
    expect(fake.requests[0].tool_choice).toBe('auto');
    const second = await llm.complete({
      purpose: 'chat',
      tools,
      messages: [
        { role: 'user', content: 'status 1001' },
        { role: 'assistant', content: null, toolCalls: first.toolCalls },
        { role: 'tool', toolCallId: first.toolCalls[0].id, name: 'getOrderStatus', content: '{"status":"shipped"}' },
      ],
    });
    expect(second.text).toBe('It shipped.');
    const sent = fake.requests[1].messages;
    expect(sent[1]).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: first.toolCalls[0].id, type: 'function', function: { name: 'getOrderStatus', arguments: '{"orderId":"1001"}' } }],
    });
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: first.toolCalls[0].id, content: '{"status":"shipped"}' });
  });

  it('no tools → no tool_choice; json response format passes through', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: '{"verdict":"resolved","summary":"x"}' });
    await provider().complete({ purpose: 'reflection', responseFormat: 'json', tools: [], messages: [{ role: 'user', content: 't' }] });
    expect(fake.requests[0].tools).toBeUndefined();
    expect(fake.requests[0].tool_choice).toBeUndefined();
    expect(fake.requests[0].response_format).toEqual({ type: 'json_object' });
  });

  it('HTTP 500 → LlmError http_500 (retryable); retried once then succeeds', async () => {
    fake = await startFakeOpenAi();
    fake.script({ status: 500 }, { text: 'recovered' });
    await expect(provider().complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      code: 'http_500',
      retryable: true,
    });
    fake.script({ status: 500 }, { text: 'recovered' });
    const llm = createResilientLlm({ primary: provider(), retries: 1 });
    expect((await llm.complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'x' }] })).text).toBe('recovered');
  });

  it('a slow endpoint → LlmError timeout', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: 'late', delayMs: 1500 });
    const err = await provider(300)
      .complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err.code).toBe('timeout');
  });

  it('malformed tool arguments → error → retry → fallback to offline, which answers', async () => {
    fake = await startFakeOpenAi();
    fake.fallback({ toolCalls: [{ name: 'getOrderStatus', args: {} }], rawArguments: '{"orderId": 10' });
    const err = await provider()
      .complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toMatchObject({ code: 'malformed_tool_call' });
    const failures: string[] = [];
    const llm = createResilientLlm({ primary: provider(), fallback: createOfflineProvider(), retries: 1, onAttemptFailed: (p) => failures.push(p) });
    const r = await llm.complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'status of order 1001' }] });
    expect(failures).toEqual(['openai', 'openai']);
    expect(r.provider).toBe('offline');
    expect(r.toolCalls[0]).toMatchObject({ name: 'getOrderStatus', args: { orderId: '1001' } });
  });

  it('a 400 is not retried', async () => {
    fake = await startFakeOpenAi();
    fake.script({ status: 400 }, { text: 'never' });
    const llm = createResilientLlm({ primary: provider(), retries: 3 });
    await expect(llm.complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ code: 'http_400' });
    expect(fake.requests).toHaveLength(1);
  });
});
