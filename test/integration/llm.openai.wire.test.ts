// Parley speaks the chat completions wire itself (src/llm/openai-http.ts). The contract: for the same request, it
// sends what the official `openai` client sends, and makes the same answer of what comes back, both against the same
// local OpenAI-compatible server.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiProvider } from '../../src/llm/openai.ts';
import { createChunkAssembler } from '../../src/llm/openai-stream.ts';
import type { LlmRequest, ToolSpec } from '../../src/llm/types.ts';
import { ORDER_STATUS_TOOL, startFakeOpenAi, type FakeOpenAi, type ScriptedResponse } from '../support/fake-openai.ts';

const tools: ToolSpec[] = [ORDER_STATUS_TOOL];
let fake: FakeOpenAi;
afterEach(async () => fake?.close());

/** The same call through the official client (streamed, as Parley asks), folded by the same assembler. */
async function throughOfficialClient(req: LlmRequest) {
  const client = new OpenAI({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
  const texts: string[] = [];
  const assembler = createChunkAssembler((t) => texts.push(t));
  const { data: stream, response } = await client.chat.completions
    .create({
      model: 'fake-1',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'status 1001' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      ...(req.tools.length ? { tools: req.tools.map((t) => ({ type: 'function' as const, function: t })), tool_choice: 'auto' as const } : {}),
      ...(req.responseFormat === 'json' ? { response_format: { type: 'json_object' as const } } : {}),
      temperature: 0.2,
    })
    .withResponse();
  if (/event-stream/.test(response.headers.get('content-type') ?? '')) for await (const chunk of stream) assembler.add(chunk);
  else assembler.addCompletion((await response.json()) as OpenAI.Chat.Completions.ChatCompletion);
  return { answer: assembler.result(), texts };
}

const cases: [string, ScriptedResponse, Partial<LlmRequest>][] = [
  ['a tool call, arguments in pieces', { toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] }, {}],
  ['streamed text', { text: 'Order 1001 has shipped, it will arrive on Monday.' }, {}],
  ['a JSON answer, no tools', { text: '{"verdict":"resolved"}' }, { tools: [], responseFormat: 'json' }],
  ['a server that ignores stream', { text: 'One whole completion.', ignoreStream: true }, {}],
  ['a terse server (no finish_reason, no usage)', { text: 'Short.', terse: true }, {}],
];

describe('the chat completions wire: Parley and the official openai client', () => {
  it.each(cases)('%s: the same request body, the same answer', async (_name, scripted, overrides) => {
    fake = await startFakeOpenAi();
    fake.script(scripted, scripted);
    const req: LlmRequest = Object.assign(
      {
        purpose: 'chat',
        tools,
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'status 1001' },
        ],
      } as LlmRequest,
      overrides,
    );
    const texts: string[] = [];
    const ours = await createOpenAiProvider({ model: 'fake-1', baseUrl: fake.url, apiKey: 'k', timeoutMs: 5000, temperature: 0.2 }).complete(
      Object.assign({}, req, { onText: (t: string) => texts.push(t) }),
    );
    const theirs = await throughOfficialClient(req);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]).toEqual(fake.requests[1]);
    expect(texts).toEqual(theirs.texts);
    expect(ours.text).toBe(theirs.answer.text);
    // The fake numbers its call ids per request: the same shape, not the same id.
    expect(ours.toolCalls).toEqual(theirs.answer.calls.map((c) => ({ id: expect.stringMatching(/^call_/), name: c.name, args: JSON.parse(c.arguments) })));
    expect(ours.usage).toEqual(theirs.answer.usage ?? { promptTokens: 0, completionTokens: 0 });
    expect(ours.model).toBe(theirs.answer.model ?? 'fake-1');
  });

  it('an endpoint nobody answers at → provider_error "Cannot reach the model endpoint", retryable', async () => {
    fake = await startFakeOpenAi();
    const url = fake.url;
    await fake.close();
    const err = await createOpenAiProvider({ model: 'fake-1', baseUrl: url, apiKey: 'k', timeoutMs: 5000 })
      .complete({ purpose: 'chat', tools: [], messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'provider_error', message: 'Cannot reach the model endpoint', retryable: true });
  });

  it("an error status: the endpoint's own message, as the official client reads it", async () => {
    fake = await startFakeOpenAi();
    fake.script({ status: 503, errorMessage: 'overloaded, come back later' });
    const err = await createOpenAiProvider({ model: 'fake-1', baseUrl: fake.url, apiKey: 'k', timeoutMs: 5000 })
      .complete({ purpose: 'chat', tools: [], messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'http_503', message: 'The model endpoint answered HTTP 503: overloaded, come back later' });
  });
});
