// Issue 3: a message acknowledged before a SIGKILL is answered after restart.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { spawnParley, tempDir, type ParleyProcess } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('crash recovery of a conversation', () => {
  it('SIGKILL after the ack → the restarted server answers the message', async () => {
    const llm = await startFakeOpenAi();
    cleanups.push(() => llm.close());
    // The first call hangs long enough for the kill; after restart it answers at once.
    llm.script({ text: 'too late', delayMs: 20_000 }, { text: 'answered after restart' });
    const storagePath = tempDir();
    const config = { llm: { provider: 'openai' as const, base_url: llm.url, model: 'fake-1', timeout_ms: 30_000, max_retries: 0 } };
    const first: ParleyProcess = await spawnParley({ storagePath, config });
    cleanups.push(() => first.kill());
    const w = await connectWidget(first.url);
    w.send({ type: 'init', customerId: 'crash-1', email: 'c@example.com' });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'm1', text: 'hello?' });
    await w.next((f) => f.type === 'ack' && f.id === 'm1');
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
    await first.kill('SIGKILL');
    w.close();

    const second = await spawnParley({ storagePath, config, port: Number(new URL(first.url).port) });
    cleanups.push(() => second.kill());
    const w2 = await connectWidget(second.url);
    cleanups.push(() => w2.close());
    w2.send({ type: 'init', customerId: 'crash-1', email: 'c@example.com' });
    const ready = await w2.next((f) => f.type === 'ready');
    const inHistory = ready.history.find((h: { role: string }) => h.role === 'assistant');
    const answer = inHistory ?? (await w2.next((f) => f.type === 'message', 15_000));
    expect(answer.text).toBe('answered after restart');
    // exactly one answer, and the user message once
    await new Promise((r) => setTimeout(r, 300));
    const w3 = await connectWidget(second.url);
    cleanups.push(() => w3.close());
    w3.send({ type: 'init', customerId: 'crash-1', email: 'c@example.com' });
    const final = await w3.next((f) => f.type === 'ready');
    expect(final.history.map((h: { role: string; text: string }) => `${h.role}:${h.text}`)).toEqual(['user:hello?', 'assistant:answered after restart']);
  });
});
