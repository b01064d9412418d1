// Issue 3: a message acknowledged before a SIGKILL is answered after restart.
// Each test starts and kills Parley processes: on a busy machine a start takes seconds, so each has 120 s.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { spawnParley, tempDir, TEST_SECRET, type ParleyProcess } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';
import { killAndRestart } from '../support/crash.ts';

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
    const { second } = await killAndRestart({
      config,
      storagePath,
      customer: { customerId: 'crash-1', email: 'c@example.com' },
      text: 'hello?',
      killWhen: async () => {
        while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
      },
      cleanup: (c) => cleanups.push(c),
    });

    const w2 = await connectWidget(second.url);
    cleanups.push(() => w2.close());
    w2.send({ type: 'init', customerId: 'crash-1', email: 'c@example.com' });
    const ready = await w2.next((f) => f.type === 'ready');
    const inHistory = ready.history.find((h: { role: string }) => h.role === 'assistant');
    const answer = inHistory ?? (await w2.next((f) => f.type === 'message', 60_000));
    expect(answer.text).toBe('answered after restart');
    // exactly one answer, and the user message once
    await new Promise((r) => setTimeout(r, 300));
    const w3 = await connectWidget(second.url);
    cleanups.push(() => w3.close());
    w3.send({ type: 'init', customerId: 'crash-1', email: 'c@example.com' });
    const final = await w3.next((f) => f.type === 'ready');
    expect(final.history.map((h: { role: string; text: string }) => `${h.role}:${h.text}`)).toEqual(['user:hello?', 'assistant:answered after restart']);
  }, 120_000);

  it('SIGKILL while an approved write is in the SDK → after restart the call is retried with the same invocationId; a careful handler applies it once; one reply', async () => {
    const llm = await startFakeOpenAi();
    cleanups.push(() => llm.close());
    llm.script({ toolCalls: [{ name: 'cancelOrder', args: { orderId: '1001' } }] });
    llm.fallback({ text: 'Order 1001 is cancelled.' });
    const storagePath = tempDir();
    const config = { llm: { provider: 'openai' as const, base_url: llm.url, model: 'fake-1', max_retries: 0 }, safety: { invoke_timeout_ms: 30_000 } };
    const first: ParleyProcess = await spawnParley({ storagePath, config });
    cleanups.push(() => first.kill());

    // The integrator's backend: records every invocationId, blocks on the first call, and is careful:
    // a call whose invocationId it has seen gets the first call's result instead of applying the write again.
    const invocationIds: string[] = [];
    const applied = new Map<string, Promise<{ orderId: string; status: string }>>();
    let writes = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sdk = createClient({ backoff: { initialMs: 100, maxMs: 400 } });
    sdk.expose(
      'cancelOrder',
      { description: 'Cancel an order', parameters: z.object({ orderId: z.string() }), mode: 'write' },
      async (args: { orderId: string }, ctx: { invocationId: string }) => {
        invocationIds.push(ctx.invocationId);
        const known = applied.get(ctx.invocationId);
        if (known) return known;
        const result = gate.then(() => {
          writes++;
          return { orderId: args.orderId, status: 'cancelled' };
        });
        applied.set(ctx.invocationId, result);
        return result;
      },
    );
    await sdk.listen({ url: first.url, secret: TEST_SECRET });
    cleanups.push(() => sdk.close());

    const w = await connectWidget(first.url);
    w.send({ type: 'init', customerId: 'crash-sdk', email: 'cs@example.com' });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'm1', text: 'cancel order 1001' });
    const confirm = await w.next((f) => f.type === 'confirm');
    w.send({ type: 'confirm', id: confirm.id, approve: true });
    while (invocationIds.length === 0) await new Promise((r) => setTimeout(r, 20));
    // The approval and the call's start come of one transition, so one write: its outputs reach the widget once it
    // has committed.
    await w.next((f) => f.type === 'confirmation' && f.outcome === 'approved', 60_000);
    await first.kill('SIGKILL');
    w.close();
    // The blocked handler finishes while Parley is down: the write is applied, its answer is lost with the socket.
    release();
    while (writes === 0) await new Promise((r) => setTimeout(r, 10));

    const second = await spawnParley({ storagePath, config, port: Number(new URL(first.url).port) });
    cleanups.push(() => second.kill());
    for (let i = 0; i < 300 && invocationIds.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(invocationIds).toHaveLength(2);
    expect(invocationIds[1]).toBe(invocationIds[0]);

    const w2 = await connectWidget(second.url);
    cleanups.push(() => w2.close());
    w2.send({ type: 'init', customerId: 'crash-sdk', email: 'cs@example.com' });
    const ready = await w2.next((f) => f.type === 'ready');
    if (!ready.history.some((h: { role: string }) => h.role === 'assistant')) await w2.next((f) => f.type === 'message', 60_000);
    await new Promise((r) => setTimeout(r, 300));
    const w3 = await connectWidget(second.url);
    cleanups.push(() => w3.close());
    w3.send({ type: 'init', customerId: 'crash-sdk', email: 'cs@example.com' });
    const final = await w3.next((f) => f.type === 'ready');
    // the approved confirmation stays in the transcript as a receipt, once
    expect(final.history.map((h: { role: string; text: string; outcome?: string }) => `${h.role}:${h.text}${h.outcome ? ` (${h.outcome})` : ''}`)).toEqual([
      'user:cancel order 1001',
      'confirmation:Cancel order 1001 (approved)',
      'assistant:Order 1001 is cancelled.',
    ]);
    expect(writes).toBe(1);
    expect(invocationIds).toHaveLength(2);
  }, 120_000);
});
