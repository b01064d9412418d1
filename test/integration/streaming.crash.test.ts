// Issue 20: a crash in the middle of a streamed reply. Nothing of the stream
// was stored, so the restarted server resumes the turn as it would any other
// (the LLM step runs again) and the customer gets one whole reply.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { tempDir } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';
import { killAndRestart } from '../support/crash.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const shown = (deltas: Record<string, any>[]) => deltas.reduce((text: string, d) => (d.reset ? '' : text) + d.text, '');

describe('crash in the middle of a streamed reply', () => {
  it('SIGKILL after two deltas → after restart the turn is answered once, whole, by a fresh stream', async () => {
    const llm = await startFakeOpenAi();
    cleanups.push(() => llm.close());
    const first = Array.from({ length: 40 }, (_, i) => `old${i}`).join(' ');
    const second = 'Answered after the restart, from the first word to the last.';
    llm.script({ text: first, chunkDelayMs: 100 }, { text: second, chunkDelayMs: 20 });
    const storagePath = tempDir();
    const config = { llm: { provider: 'openai' as const, base_url: llm.url, model: 'fake-1', max_retries: 0 } };
    const { second: after } = await killAndRestart({
      config,
      storagePath,
      customer: { customerId: 'crash-stream', email: 'cs@example.com' },
      text: 'tell me everything',
      killWhen: async (w) => {
        await w.next((f) => f.type === 'delta');
        await w.next((f) => f.type === 'delta');
      },
      cleanup: (c) => cleanups.push(c),
    });

    const w2 = await connectWidget(after.url);
    cleanups.push(() => w2.close());
    w2.send({ type: 'init', customerId: 'crash-stream', email: 'cs@example.com' });
    const ready = await w2.next((f) => f.type === 'ready');
    const stored = ready.history.find((h: { role: string }) => h.role === 'assistant');
    const answer = stored ?? (await w2.next((f) => f.type === 'message', 60_000));
    expect(answer.text).toBe(second);
    // whatever this widget was shown of the reply is the start of the second stream, never the first's
    const deltas = w2.frames.filter((f) => f.type === 'delta');
    expect(second.startsWith(shown(deltas))).toBe(true);
    expect(deltas.some((d) => d.text.includes('old'))).toBe(false);
    expect(llm.requests).toHaveLength(2);

    await new Promise((r) => setTimeout(r, 300));
    const w3 = await connectWidget(after.url);
    cleanups.push(() => w3.close());
    w3.send({ type: 'init', customerId: 'crash-stream', email: 'cs@example.com' });
    const final = await w3.next((f) => f.type === 'ready');
    expect(final.history.map((h: { role: string; text: string }) => `${h.role}:${h.text}`)).toEqual(['user:tell me everything', `assistant:${second}`]);
  }, 120_000);
});
