// Issue 20: the openai provider streams. The real `openai` client against the
// local fake, which answers with server-sent events.
import { afterEach, describe, expect, it } from 'vitest';
import { createOfflineProvider } from '../../src/llm/offline.ts';
import { createOpenAiProvider } from '../../src/llm/openai.ts';
import { createResilientLlm, type FailedAttempt } from '../../src/llm/resilient.ts';
import { LlmError, type LlmRequest, type ToolSpec } from '../../src/llm/types.ts';
import { ORDER_STATUS_TOOL, startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';

const tools: ToolSpec[] = [
  ORDER_STATUS_TOOL,
  {
    name: 'trackParcel',
    description: 'Track a parcel',
    parameters: { type: 'object', properties: { carrier: { type: 'string' }, code: { type: 'string' } }, required: ['code'] },
  },
];
let fake: FakeOpenAi;
afterEach(async () => fake?.close());

const provider = (timeoutMs = 2000) => createOpenAiProvider({ model: 'fake-1', baseUrl: fake.url, apiKey: 'k', timeoutMs });
const ask = (pieces: string[] = [], more: Partial<LlmRequest> = {}): LlmRequest => ({
  purpose: 'chat',
  tools,
  messages: [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'where is my order?' },
  ],
  onText: (t) => pieces.push(t),
  ...more,
});

describe('openai provider, streamed', () => {
  it('asks for a stream with usage; hands on each text piece as it arrives; records usage and the model the chunks name', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: 'Order 1001 has shipped.', chunks: ['Order', ' 1001', ' has', ' shipped.'], model: 'fake-1-2026-01', chunkDelayMs: 30 });
    const pieces: { text: string; at: number }[] = [];
    const res = await provider().complete(ask([], { onText: (text) => pieces.push({ text, at: performance.now() }) }));
    expect(fake.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true }, model: 'fake-1' });
    expect(pieces.map((p) => p.text)).toEqual(['Order', ' 1001', ' has', ' shipped.']);
    // passed on as they came, not all at the end: the first piece well before the answer was complete
    expect(pieces[3].at - pieces[0].at).toBeGreaterThanOrEqual(60);
    expect(res.text).toBe('Order 1001 has shipped.');
    expect(res.toolCalls).toEqual([]);
    expect(res.usage).toEqual({ promptTokens: 22, completionTokens: 7 });
    expect(res.model).toBe('fake-1-2026-01');
    // the whole streamed call, not the time to the first chunk
    expect(res.durationMs).toBeGreaterThanOrEqual(Math.floor(pieces[3].at - pieces[0].at));
  });

  it('assembles several tool calls in one step from their deltas, arguments split across many chunks', async () => {
    fake = await startFakeOpenAi();
    fake.script({
      toolCalls: [
        { name: 'getOrderStatus', args: { orderId: '1001' } },
        { name: 'trackParcel', args: { carrier: 'DHL', code: 'JJD0099887766' } },
      ],
      argumentPieces: 6,
    });
    const pieces: string[] = [];
    const res = await provider().complete(ask(pieces));
    expect(res.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'getOrderStatus', args: { orderId: '1001' } },
      { id: expect.stringMatching(/^call_/), name: 'trackParcel', args: { carrier: 'DHL', code: 'JJD0099887766' } },
    ]);
    expect(res.toolCalls[0].id).not.toBe(res.toolCalls[1].id);
    expect(res.text).toBeNull();
    expect(pieces).toEqual([]);
    expect(res.usage).toEqual({ promptTokens: 22, completionTokens: 7 });
  });

  it('arguments that are not JSON once assembled → malformed_tool_call', async () => {
    fake = await startFakeOpenAi();
    fake.script({ toolCalls: [{ name: 'getOrderStatus', args: {} }], rawArguments: '{"orderId": "10', argumentPieces: 4 });
    await expect(provider().complete(ask())).rejects.toMatchObject({ code: 'malformed_tool_call' });
  });

  it('a connection cut half-way → a retryable error after the text so far; the wrapper retries and the retry is whole', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: 'This answer will break off', cutAfterChunks: 2 }, { text: 'Second try, complete.' });
    const pieces: string[] = [];
    const failed: FailedAttempt[] = [];
    const llm = createResilientLlm({ primary: provider(), retries: 1 });
    const res = await llm.complete(Object.assign(ask(pieces), { onAttemptFailed: (a: FailedAttempt) => failed.push(a) }));
    expect(failed).toEqual([expect.objectContaining({ provider: 'openai', willRetry: true })]);
    expect(pieces).toEqual(['This', ' answer', 'Second', ' try,', ' complete.']);
    expect(res.text).toBe('Second try, complete.');
  });

  it('an error event in the middle of the stream → a retryable provider error', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: 'Half of an answer', errorAfterChunks: 2 });
    const err = await provider()
      .complete(ask())
      .catch((e) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err.retryable).toBe(true);
  });

  it('a response the server ends properly without a finish_reason is the answer; one that ends with nothing is a retryable error', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: 'Answer from a terse server', terse: true }, { text: 'never sent', endAfterChunks: 0 });
    const terse = await provider().complete(ask());
    expect(terse.text).toBe('Answer from a terse server');
    expect(terse.usage).toEqual({ promptTokens: 0, completionTokens: 0 });
    const err = await provider()
      .complete(ask())
      .catch((e) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err).toMatchObject({ code: 'provider_error', retryable: true });
  });

  it('a compatible server that ignores stream and answers whole: its text, calls and usage are read all the same', async () => {
    fake = await startFakeOpenAi();
    fake.script(
      { text: 'Whole answer, no stream.', ignoreStream: true },
      { toolCalls: [{ name: 'getOrderStatus', args: { orderId: '7' } }], ignoreStream: true, model: 'whole-1' },
    );
    const pieces: string[] = [];
    const first = await provider().complete(ask(pieces));
    expect(fake.requests[0].stream).toBe(true);
    expect(pieces).toEqual(['Whole answer, no stream.']);
    expect(first).toMatchObject({ text: 'Whole answer, no stream.', usage: { promptTokens: 22, completionTokens: 7 } });
    const second = await provider().complete(ask());
    expect(second).toMatchObject({ model: 'whole-1', toolCalls: [{ name: 'getOrderStatus', args: { orderId: '7' } }] });
  });

  it('a stream that stops sending → timeout at llm.timeout_ms, counted over the whole answer', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: 'one two three four', stallAfterChunks: 2 });
    const pieces: string[] = [];
    const started = Date.now();
    const err = await provider(400)
      .complete(ask(pieces))
      .catch((e) => e);
    expect(err).toMatchObject({ code: 'timeout' });
    expect(pieces).toEqual(['one', ' two']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a stream that keeps sending past the deadline is cut at it too', async () => {
    fake = await startFakeOpenAi();
    fake.script({ text: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 50 });
    const err = await provider(500)
      .complete(ask())
      .catch((e) => e);
    expect(err).toMatchObject({ code: 'timeout' });
  });

  it('a failed stream falls back: the fallback writes its own reply from the start', async () => {
    fake = await startFakeOpenAi();
    fake.fallback({ text: 'Broken off', cutAfterChunks: 1 });
    const pieces: string[] = [];
    const failed: FailedAttempt[] = [];
    const llm = createResilientLlm({ primary: provider(), fallback: createOfflineProvider(), retries: 0 });
    const res = await llm.complete(
      Object.assign(ask(pieces, { tools: [] }), {
        onAttemptFailed: (a: FailedAttempt) => failed.push(a),
      }),
    );
    expect(res.provider).toBe('offline');
    expect(failed).toHaveLength(1);
    expect(pieces[0]).toBe('Broken');
    expect(pieces.slice(1).join('')).toBe(res.text);
    expect(pieces.length).toBeGreaterThan(2);
  });

  it('cancelled by the caller mid-stream → aborted: not retried, not handed to the fallback', async () => {
    fake = await startFakeOpenAi();
    fake.fallback({ text: 'a b c d e f g h', chunkDelayMs: 100 });
    const controller = new AbortController();
    const pieces: string[] = [];
    const failed: FailedAttempt[] = [];
    const llm = createResilientLlm({ primary: provider(), fallback: provider(), retries: 2 });
    const done = llm.complete(
      Object.assign(ask(pieces, { signal: controller.signal, onText: (t) => (pieces.push(t), pieces.length === 2 && controller.abort()) }), {
        onAttemptFailed: (a: FailedAttempt) => failed.push(a),
      }),
    );
    await expect(done).rejects.toMatchObject({ code: 'aborted', retryable: false });
    expect(failed).toEqual([expect.objectContaining({ willRetry: false })]);
    expect(fake.requests).toHaveLength(1);
    expect(pieces).toEqual(['a', ' b']);
  });
});
