// The LLM step opens its model call through the loop pacer (src/runtime/loop-pacer.ts): turns started together
// by one commit do not build and send their model requests back to back. The real `openai` client against the SSE
// fake, the real LLM step on a real Parley's services.
import { afterEach, describe, expect, it } from 'vitest';
import { createLlmStep } from '../../src/conversations/llm-step.ts';
import { createOpenAiProvider } from '../../src/llm/openai.ts';
import type { LoopPacer } from '../../src/runtime/loop-pacer.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley } from '../support/parley.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('LLM step pacing', () => {
  it('the model is not called before the pacer lets the step start; then it is, once', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.fallback({ text: 'Paced answer.' });
    const p = await startParley();
    open.push(p);
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    let asked = 0;
    const pacer: LoopPacer = {
      next: () => {
        asked++;
        return gate;
      },
    };
    const openai = createOpenAiProvider({ model: 'fake-1', baseUrl: llm.url, timeoutMs: 5000 });
    const step = createLlmStep({ services: p.services, llm: openai, hub: p.runtime.hub, history: p.services.store.history, pacer });
    const out = step(
      { conversationId: 'conv_web_paced-1', customerId: 'paced-1', turnId: 'conv_web_paced-1:m1', step: 0, transcript: [{ role: 'user', text: 'hi' }] },
      {},
    );
    await expect.poll(() => asked, { timeout: 15_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 300)); // a request that did not wait for the pacer would show now
    expect(llm.requests).toHaveLength(0);
    letGo();
    expect(await out).toMatchObject({ kind: 'reply', text: 'Paced answer.' });
    expect(llm.requests).toHaveLength(1);
  });
});
