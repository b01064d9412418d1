// Issue 20, latency work: pieces of a reply that arrive in the same turn of
// Parley's event loop go out as one delta (src/conversations/reply-stream.ts),
// the first at once. A real Parley, the real `openai` client against the SSE
// fake, a widget over a real socket; and the LLM step itself with the offline
// provider, which hands over every piece of a reply in one turn.
import { afterEach, describe, expect, it } from 'vitest';
import { createLlmStep } from '../../src/conversations/llm-step.ts';
import type { ReplyDelta } from '../../src/conversations/reply-stream.ts';
import { createOfflineProvider } from '../../src/llm/offline.ts';
import { startFakeOpenAi, wordChunks } from '../support/fake-openai.ts';
import { startParley } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('deltas that arrive together', () => {
  it('a model that sends its whole reply at once: fewer deltas than pieces, the first word first, joined exactly the final message', async () => {
    const text = 'Your parcel 1001 left the warehouse this morning and the courier expects to deliver it on Thursday before noon.';
    const pieces = wordChunks(text);
    const llm = await startFakeOpenAi();
    open.push(llm);
    // No pause between chunks: they reach Parley in one or a few reads.
    llm.fallback({ text });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', max_retries: 0 } } });
    open.push(p);
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'burst-1', email: 'burst-1@example.com' });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'm1', text: 'where is my parcel?' });
    const message = await w.next((f) => f.type === 'message');
    const deltas = w.frames.slice(0, w.frames.indexOf(message)).filter((f) => f.type === 'delta');
    expect(message.text).toBe(text);
    expect(deltas.map((d) => d.text).join('')).toBe(text);
    expect(deltas.every((d) => d.id === message.id && !d.reset)).toBe(true);
    expect(deltas[0].text).toBe(pieces[0]);
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.length).toBeLessThan(pieces.length);
  });

  it('the step returns only once every piece is out: the text waiting for the end of the turn is flushed with the reply', async () => {
    const p = await startParley();
    open.push(p);
    const offline = createOfflineProvider('offline-1');
    const step = createLlmStep({ services: p.services, llm: offline, hub: p.runtime.hub, history: p.services.store.history });
    const sent: ReplyDelta[] = [];
    const out = await step(
      {
        conversationId: 'conv_web_flush-1',
        customerId: 'flush-1',
        turnId: 'conv_web_flush-1:m1',
        step: 0,
        transcript: [{ role: 'user', text: 'hello there' }],
      },
      { onDelta: (d) => sent.push(d) },
    );
    // Checked before this turn of the event loop ends: nothing deferred has run yet.
    expect(out.kind).toBe('reply');
    const reply = (out as { text: string }).text;
    expect(reply.split(' ').length).toBeGreaterThan(3); // more than one piece of the offline provider's
    expect(sent.map((d) => d.text).join('')).toBe(reply);
    // the first piece at once, the rest of that turn's pieces as one
    expect(sent).toHaveLength(2);
  });
});
