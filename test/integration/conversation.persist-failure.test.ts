// A conversation whose state can't be written (a snapshot that won't encode,
// a full disk) is retried a bounded number of times; then the turn is
// abandoned with an apology and the conversation goes on. Nothing is retried
// forever, and the failures are logged once per attempt.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { APOLOGY_LLM_FAILED } from '../../machines/conversation.ts';
import { createClient } from '../../sdk/src/index.ts';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { createConversationHost, MAX_WRITE_ATTEMPTS } from '../../src/conversations/host.ts';
import type { StoreRepos } from '../../src/store/repos.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Real time for what a step of the clock causes (writes, retries) on a busy machine. */
const DEADLINE_MS = 15_000;
/**
 * Moves the clock a second at a time until `done` (or DEADLINE_MS of real time), giving each step real time to act.
 * At most DEADLINE_MS / 50 s of the clock: well inside the tool's invoke timeout (600 s).
 */
async function stepUntil(clock: ManualClock, done: () => boolean) {
  for (const end = Date.now() + DEADLINE_MS; !done() && Date.now() < end;) {
    clock.advance(1000);
    await sleep(50);
  }
}
/** Moves the clock `seconds` a second at a time, each step given real time to act (a sweep reads the store). */
async function stepSeconds(clock: ManualClock, seconds: number) {
  for (let i = 0; i < seconds; i++) {
    clock.advance(1000);
    await sleep(50);
  }
}
const writeFailures = (p: TestParley) => p.logs.filter((l) => l.includes('conversation write failed')).length;

async function setup() {
  const clock = createManualClock(Date.now());
  const p = await startParley({ clock, config: { llm: { provider: 'offline' }, safety: { invoke_timeout_ms: 600_000 } } });
  open.push(p);
  const sdk = createClient();
  let calls = 0;
  sdk.expose('getOrderStatus', { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }), mode: 'read' }, async () => {
    calls++;
    return new Promise(() => {}); // never answers: the turn stays in callingTool
  });
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  open.push(sdk);
  const w = await startWidgetSession(p.url(), { customerId: 'poison-1', email: 'p@example.com' });
  open.push(w);
  // Writes of this conversation fail while it is calling the tool (as a snapshot that won't encode would).
  const store = p.services.store;
  const real = store.transaction.bind(store);
  let poisoned = false;
  const inCall = () => p.runtime.host.list().some((c) => c.conversationId === 'conv_web_poison-1' && c.state === 'callingTool');
  store.transaction = <T>(fn: (tx: StoreRepos) => Promise<T>) =>
    real(async (tx) => {
      const r = await fn(tx);
      if (poisoned && inCall()) throw new Error('snapshot could not be encoded');
      return r;
    });
  // The host's write (`conversations.persist`: one statement or the engine's own transaction) fails the same way.
  const realPersist = store.conversations.persist.bind(store.conversations);
  store.conversations.persist = async (...args) => {
    if (poisoned && inCall()) throw new Error('snapshot could not be encoded');
    return realPersist(...args);
  };
  const restore = () => {
    store.transaction = real;
    store.conversations.persist = realPersist;
  };
  /** Every write of the conversation fails at once from now on (until `restore`). */
  const failWrites = (message: string) => {
    store.transaction = (() => Promise.reject(new Error(message))) as typeof store.transaction;
    store.conversations.persist = () => Promise.reject(new Error(message));
  };
  return { p, w, clock, calls: () => calls, poison: () => (poisoned = true), failWrites, restore };
}

describe('bounded persist retries', () => {
  it('after repeated write failures the turn is abandoned with an apology; the next message is answered', async () => {
    const { p, w, clock, calls, poison, restore } = await setup();
    w.send({ type: 'message', id: 'm1', text: 'What is the status of order 1001?' });
    await w.next((f) => f.type === 'ack' && f.id === 'm1');
    while (calls() === 0) await sleep(10);
    poison();
    // A message queued behind the stuck turn makes the conversation write (and fail).
    w.send({ type: 'message', id: 'm2', text: 'thanks, bye' });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'unavailable' });
    await stepUntil(clock, () => w.frames.some((f) => f.type === 'message'));
    const apology = await w.next((f) => f.type === 'message', DEADLINE_MS);
    expect(apology.text).toBe(APOLOGY_LLM_FAILED);
    expect(writeFailures(p)).toBe(MAX_WRITE_ATTEMPTS);
    // No more retries, however long we wait.
    for (let i = 0; i < 10; i++) {
      clock.advance(5000);
      await sleep(10);
    }
    expect(writeFailures(p)).toBe(MAX_WRITE_ATTEMPTS);
    expect(p.runtime.host.list().find((c) => c.conversationId === 'conv_web_poison-1')?.state).toBe('idle');

    // m2 was kept and is answered after the apology; re-sending it is recognised as a duplicate.
    const next = await w.next((f) => f.type === 'message');
    expect(next.text).not.toBe(APOLOGY_LLM_FAILED);
    w.send({ type: 'message', id: 'm2', text: 'thanks, bye' });
    await w.next((f) => f.type === 'ack' && f.id === 'm2');
    w.send({ type: 'message', id: 'm3', text: 'one more thing' });
    await w.next((f) => f.type === 'ack' && f.id === 'm3');
    expect((await w.next((f) => f.type === 'message')).text.length).toBeGreaterThan(0);
    restore();
  });

  it('a conversation whose writes never succeed is dropped after a bounded number of attempts, and resumes later', async () => {
    const { p, w, clock, calls, failWrites, restore } = await setup();
    w.send({ type: 'message', id: 'm1', text: 'What is the status of order 1001?' });
    await w.next((f) => f.type === 'ack' && f.id === 'm1');
    while (calls() === 0) await sleep(10);
    failWrites('MDB_MAP_FULL');
    w.send({ type: 'message', id: 'm2', text: 'thanks, bye' });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'unavailable' });
    await stepUntil(clock, () => p.runtime.host.activeCount() === 0);
    expect(writeFailures(p)).toBe(2 * MAX_WRITE_ATTEMPTS);
    expect(p.runtime.host.activeCount()).toBe(0);
    expect(p.logs.filter((l) => l.includes('conversation deactivated')).length).toBe(1);
    // It rests for the minute before it comes back by itself (the next test), on every engine: on PostgreSQL the
    // cluster's takeover sweep (every second here) leaves it alone, though it is owned here with a turn waiting.
    await stepSeconds(clock, 30);
    expect(writeFailures(p)).toBe(2 * MAX_WRITE_ATTEMPTS);
    expect(p.runtime.host.activeCount()).toBe(0);
    restore();
    // Back to health: the next message reactivates the conversation from its last stored state.
    w.send({ type: 'message', id: 'm3', text: 'hello?' });
    await w.next((f) => f.type === 'ack' && f.id === 'm3');
    expect(p.runtime.host.activeCount()).toBe(1);
    // m1's turn was the last stored state: it resumes, waiting on the same (still unanswered) tool call.
    await expect
      .poll(() => p.runtime.host.list(), { timeout: DEADLINE_MS })
      .toEqual([expect.objectContaining({ conversationId: 'conv_web_poison-1', state: 'callingTool', queued: 1 })]);
    expect(calls()).toBe(1);
  });

  it('a dropped conversation comes back by itself from its last stored state: what it acknowledged is not left waiting for a new message', async () => {
    const { p, w, clock, calls, failWrites, restore } = await setup();
    w.send({ type: 'message', id: 'm1', text: 'What is the status of order 1001?' });
    await w.next((f) => f.type === 'ack' && f.id === 'm1');
    while (calls() === 0) await sleep(10);
    failWrites('snapshot could not be encoded');
    w.send({ type: 'message', id: 'm2', text: 'thanks, bye' });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'unavailable' });
    await stepUntil(clock, () => p.runtime.host.activeCount() === 0);
    expect(p.runtime.host.activeCount()).toBe(0);
    restore();
    // No new message: a minute later the conversation is back, resuming m1's turn (the same tool call).
    clock.advance(61_000);
    await expect
      .poll(() => p.runtime.host.list(), { timeout: DEADLINE_MS })
      .toEqual([expect.objectContaining({ conversationId: 'conv_web_poison-1', state: 'callingTool' })]);
  });

  it('an actor that fails (a malformed LLM step) is replaced: the customer gets the apology, the next message is answered', async () => {
    const p = await startParley();
    open.push(p);
    const delivered: string[] = [];
    let n = 0;
    const host = createConversationHost({
      services: p.services,
      // The first step's output breaks the machine (no calls array); later ones are fine.
      llmStep: async () =>
        n++ === 0 ? ({ kind: 'tools', at: p.services.clock.now() } as never) : { kind: 'reply', text: 'fine now', at: p.services.clock.now() },
      invokeTool: async () => ({ ok: true, data: null }),
      sinks: { web: { deliver: (_meta, o) => void (o.type === 'reply' && delivered.push(o.text)) } },
    });
    open.push({ close: () => host.stop() });
    const customer = { customerId: 'broken-1', externalId: 'broken-1' };
    await host.receive(customer, 'web', { messageId: 'm1', text: 'hello' });
    await expect.poll(() => delivered.length, { timeout: DEADLINE_MS }).toBeGreaterThan(0);
    expect(delivered).toEqual([APOLOGY_LLM_FAILED]);
    await host.receive(customer, 'web', { messageId: 'm2', text: 'again' });
    await expect.poll(() => delivered.length, { timeout: DEADLINE_MS }).toBeGreaterThanOrEqual(2);
    expect(delivered).toEqual([APOLOGY_LLM_FAILED, 'fine now']);
    expect((await historyOf(p.services.store, 'conv_web_broken-1')).filter((r) => r.role !== 'tool').map((r) => `${r.role}:${r.text}`)).toEqual([
      'user:hello',
      `assistant:${APOLOGY_LLM_FAILED}`,
      'user:again',
      'assistant:fine now',
    ]);
  });
});
