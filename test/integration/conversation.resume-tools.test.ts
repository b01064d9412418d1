// Issue 33 part 3: a resumed turn waits for its tools. A turn interrupted by a SIGKILL resumes at the restart, before
// the backend's SDK has registered again (a real backend reconnects after a backoff): it waits up to
// `sdk.resume_grace_seconds` for it, and answers with the tool's data. If no backend comes, it answers without and
// records `tools_unavailable` (an error event, counted by /metrics).
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { startFakeOpenAi, type ScriptedResponse } from '../support/fake-openai.ts';
import { tempDir, TEST_SECRET } from '../support/parley.ts';
import { parsePrometheusText, sampleValue } from '../support/prom-text.ts';
import { connectWidget } from '../support/widget-client.ts';
import { killAndRestart } from '../support/crash.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Body = { messages: { role: string; content: string | null }[]; tools?: { function: { name: string } }[] };
/** A model that looks the order up when it is offered the function, and says it cannot when it is not. */
const model = (body: Body): ScriptedResponse => {
  const result = body.messages.find((m) => m.role === 'tool');
  if (result) return { text: `Here is what I found: ${result.content}` };
  if (body.tools?.some((t) => t.function.name === 'getOrderStatus')) return { toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] };
  return { text: "I can't look anything up right now." };
};

async function killMidTurn(grace: number) {
  const llm = await startFakeOpenAi();
  cleanups.push(() => llm.close());
  // The first call hangs long enough for the kill; after the restart the model answers at once.
  llm.script({ text: 'too late', delayMs: 30_000 });
  llm.fallback(model);
  const storagePath = tempDir();
  const config = {
    llm: { provider: 'openai' as const, base_url: llm.url, model: 'fake-1', timeout_ms: 60_000, max_retries: 0 },
    sdk: { resume_grace_seconds: grace },
  };
  const { second } = await killAndRestart({
    config,
    storagePath,
    customer: { customerId: 'resume-1', email: 'r@example.com' },
    text: 'where is order 1001?',
    killWhen: async () => {
      while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
    },
    cleanup: (c) => cleanups.push(c),
  });
  return { llm, second };
}

async function answerOf(url: string) {
  const w = await connectWidget(url);
  cleanups.push(() => w.close());
  w.send({ type: 'init', customerId: 'resume-1', email: 'r@example.com' });
  const ready = await w.next((f) => f.type === 'ready', 30_000);
  const inHistory = ready.history.find((h: { role: string }) => h.role === 'assistant');
  return inHistory ?? (await w.next((f) => f.type === 'message' && f.role === 'assistant', 40_000));
}

describe('a resumed turn waits for its tools', () => {
  it('SIGKILL mid-turn; the backend reconnects 3 s after the restart → the customer gets the tool’s data', async () => {
    const { second } = await killMidTurn(20);
    const calls: unknown[] = [];
    const answer = answerOf(second.url);
    await new Promise((r) => setTimeout(r, 3_000));
    const sdk = createClient();
    sdk.expose(
      'getOrderStatus',
      { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }), mode: 'read' },
      async (args: { orderId: string }) => {
        calls.push(args);
        return { orderId: args.orderId, status: 'shipped', eta: '2026-12-01' };
      },
    );
    await sdk.listen({ url: second.url, secret: TEST_SECRET });
    cleanups.push(() => sdk.close());
    expect((await answer).text).toContain('"status":"shipped"');
    expect(calls).toEqual([{ orderId: '1001' }]);
  }, 90_000);

  it('no backend within the grace → an honest answer, and tools_unavailable is recorded and counted', async () => {
    const { second } = await killMidTurn(1);
    expect((await answerOf(second.url)).text).toBe("I can't look anything up right now.");
    const headers = { authorization: `Bearer ${TEST_SECRET}` };
    let count: number | undefined;
    const end = Date.now() + 20_000;
    while (count !== 1 && Date.now() < end) {
      count = sampleValue(parsePrometheusText(await (await fetch(`${second.url}/metrics`, { headers })).text()), 'parley_tools_unavailable_total');
      if (count !== 1) await new Promise((r) => setTimeout(r, 100));
    }
    expect(count).toBe(1);
  }, 90_000);
});
