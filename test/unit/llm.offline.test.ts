import { describe, expect, it } from 'vitest';
import { chooseTool, createOfflineProvider, fillArguments, reflect, sentenceFor, wordPieces } from '../../src/llm/offline.ts';
import { renderTranscript } from '../../src/daemon/transcript.ts';
import type { ToolSpec } from '../../src/llm/types.ts';

const tools: ToolSpec[] = [
  {
    name: 'getOrderStatus',
    description: 'Get the status of an order by its order number',
    parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  },
  {
    name: 'cancelOrder',
    description: 'Cancel an order by its order number',
    parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  },
  {
    name: 'updateEmail',
    description: 'Change the email address on the account',
    parameters: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  },
];

describe('offline provider', () => {
  const llm = createOfflineProvider();

  it('chooses the function by name and description words', () => {
    expect(chooseTool('What is the status of order 1001?', tools)?.name).toBe('getOrderStatus');
    expect(chooseTool('cancel order 1001', tools)?.name).toBe('cancelOrder');
    expect(chooseTool('please change my email to a@b.co', tools)?.name).toBe('updateEmail');
    expect(chooseTool('hello there', tools)).toBeUndefined();
  });

  it('fills string ids, numbers and emails from the message', () => {
    expect(fillArguments('status of order 1001?', tools[0].parameters)).toEqual({ args: { orderId: '1001' }, missing: [] });
    expect(fillArguments('set it to ann@example.com', tools[2].parameters)).toEqual({ args: { email: 'ann@example.com' }, missing: [] });
    expect(fillArguments('refund 2 items', { type: 'object', properties: { count: { type: 'integer' } } }).args).toEqual({ count: 2 });
    expect(fillArguments('status of my order', tools[0].parameters).missing).toEqual(['orderId']);
  });

  it('calls the tool, then answers with its result values', async () => {
    const first = await llm.complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'What is the status of order 1001?' }] });
    expect(first.toolCalls).toEqual([{ id: expect.any(String), name: 'getOrderStatus', args: { orderId: '1001' } }]);
    const second = await llm.complete({
      purpose: 'chat',
      tools,
      messages: [
        { role: 'user', content: 'What is the status of order 1001?' },
        { role: 'assistant', content: null, toolCalls: first.toolCalls },
        {
          role: 'tool',
          toolCallId: first.toolCalls[0].id,
          name: 'getOrderStatus',
          content: JSON.stringify({ orderId: '1001', status: 'shipped', eta: '2026-11-25' }),
        },
      ],
    });
    expect(second.text).toBe('Order 1001 is shipped (eta: 2026-11-25).');
    expect(second.usage.promptTokens).toBeGreaterThan(0);
  });

  it('asks for a missing required parameter instead of calling', async () => {
    const r = await llm.complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'cancel my order' }] });
    expect(r.toolCalls).toEqual([]);
    expect(r.text).toMatch(/need order id/i);
  });

  it('says what it can help with when nothing matches', async () => {
    const r = await llm.complete({ purpose: 'chat', tools, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.text).toContain('get the status of an order by its order number');
    expect(r.text).toContain('cancel an order');
  });

  it('is honest about failed, declined and expired actions', async () => {
    const ask = (content: string) =>
      llm.complete({
        purpose: 'chat',
        tools,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', toolCallId: 'c', name: 'cancelOrder', content },
        ],
      });
    expect((await ask('Error (not_cancellable): Order 1002 has already shipped')).text).toBe("Sorry, that didn't work: Order 1002 has already shipped");
    expect((await ask('The customer declined this action; it was not carried out.')).text).toMatch(/didn't go ahead/);
    expect((await ask('The customer did not confirm in time; the action was cancelled and not carried out.')).text).toMatch(/timed out/);
  });

  it('phrases results', () => {
    expect(sentenceFor({ orderId: '1001', status: 'cancelled' })).toBe('Order 1001 is cancelled.');
    expect(sentenceFor({ status: 'ok' })).toBe('The status is ok.');
    expect(sentenceFor(42)).toBe('Here is what I found: 42.');
  });
});

describe('offline reflection verdicts', () => {
  const rec = (role: 'user' | 'assistant' | 'tool', text: string, data?: Record<string, unknown>) => ({
    id: Math.random().toString(),
    conversationId: 'c',
    role,
    text,
    at: 0,
    data,
  });

  it('unresolved when the last tool call failed', () => {
    const t = renderTranscript([
      rec('user', 'cancel 1002'),
      rec('tool', 'already shipped', { name: 'cancelOrder', ok: false }),
      rec('assistant', "Sorry, that didn't work"),
    ]);
    expect(reflect(t).verdict).toBe('unresolved');
    expect(reflect(t).followup).toBeTruthy();
  });

  it("unresolved when the customer's last message went unanswered", () => {
    expect(reflect(renderTranscript([rec('user', 'hello?')])).verdict).toBe('unresolved');
  });

  it('resolved when a successful tool result was answered', () => {
    const t = renderTranscript([rec('user', 'status 1001'), rec('tool', '', { name: 'getOrderStatus', ok: true }), rec('assistant', 'Order 1001 is shipped.')]);
    expect(reflect(t)).toEqual({ verdict: 'resolved', summary: expect.any(String) });
  });

  it('unclear otherwise', () => {
    expect(reflect(renderTranscript([rec('user', 'hi'), rec('assistant', 'hello!')])).verdict).toBe('unclear');
  });

  it('answers reflection requests with the JSON verdict', async () => {
    const r = await createOfflineProvider().complete({
      purpose: 'reflection',
      responseFormat: 'json',
      tools: [],
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: renderTranscript([rec('user', 'hello?')]) },
      ],
    });
    expect(JSON.parse(r.text!)).toMatchObject({ verdict: 'unresolved' });
  });
});

describe('offline LLM streaming (issue 20)', () => {
  const ask = { purpose: 'chat' as const, tools: [], messages: [{ role: 'user' as const, content: 'hello' }] };

  it('hands its reply to onText three words at a time; joined, the pieces are the reply', async () => {
    const pieces: string[] = [];
    const r = await createOfflineProvider().complete({ ...ask, onText: (t) => pieces.push(t) });
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    expect(pieces.join('')).toBe(r.text);
    expect(pieces.slice(0, -1).every((p) => p.trim().split(/\s+/).length === 3)).toBe(true);
  });

  it('pauses offline_delta_delay_ms between pieces (on the clock it is given); a cancelled call stops', async () => {
    const waits: number[] = [];
    const pieces: string[] = [];
    const llm = createOfflineProvider('offline-1', { delayMs: 40, sleep: async (ms) => void waits.push(ms) });
    await llm.complete({ ...ask, onText: (t) => pieces.push(t) });
    expect(waits).toEqual(Array(pieces.length - 1).fill(40));
    const controller = new AbortController();
    const cut: string[] = [];
    const call = llm.complete({ ...ask, signal: controller.signal, onText: (t) => (cut.push(t), controller.abort()) });
    await expect(call).rejects.toMatchObject({ code: 'aborted' });
    expect(cut).toHaveLength(1);
  });

  it('wordPieces keeps every character', () => {
    expect(wordPieces('  a b  c\nd e ', 2)).toEqual(['  a b  ', 'c\nd ', 'e ']);
    expect(wordPieces('', 3)).toEqual([]);
    expect(wordPieces('   ', 3)).toEqual(['   ']);
  });
});
