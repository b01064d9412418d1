// Several Parley processes on one PostgreSQL (issue 17, parts 2, 3, 5 and 8): one writer per conversation, events
// for a conversation owned by another node through its inbox, widget frames across nodes, and takeover of a killed
// or paused node's conversations. Real child processes on a real PostgreSQL; the model is a local OpenAI-compatible
// server whose answers name the message they answer, so a doubled or lost answer shows in the history.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { spawnParley, tempDir, type ParleyProcess } from '../support/parley.ts';
import { createMigratedTestDatabase } from '../support/shared-postgres.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';
import { callThenAnswer, orderBackend, type OrderHandler } from '../support/order-backend.ts';
import { sql } from '../support/sql.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A write that records the orders it cancelled. */
const cancel =
  (calls: string[]): OrderHandler =>
  async ({ orderId }) => {
    calls.push(orderId);
    return { status: 'cancelled' };
  };

/** The last customer message of a chat-completions request. */
const lastUserText = (body: { messages: { role: string; content: unknown }[] }) =>
  String([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');

/** A model that answers "re: <message>"; the first request for a message containing `slowWord` hangs `slowMs`. */
async function model(o: { slowWord?: string; slowMs?: number } = {}): Promise<FakeOpenAi> {
  const llm = await startFakeOpenAi();
  cleanups.push(() => llm.close());
  let slowed = false;
  llm.fallback((body) => {
    const text = lastUserText(body);
    if (o.slowWord && text.includes(o.slowWord) && !slowed) {
      slowed = true;
      return { text: `re: ${text}`, delayMs: o.slowMs ?? 20_000 };
    }
    return { text: `re: ${text}` };
  });
  return llm;
}

async function node(url: string, nodeId: string, llm: FakeOpenAi, extra: Record<string, unknown> = {}): Promise<ParleyProcess> {
  const p = await spawnParley({
    storagePath: tempDir(),
    config: {
      storage: { engine: 'postgres', url },
      cluster: { node_id: nodeId, lease_seconds: 1 },
      llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', timeout_ms: 60_000, max_retries: 0 },
      ...extra,
    },
  });
  cleanups.push(() => p.kill('SIGKILL'));
  return p;
}

async function widget(url: string, customerId: string): Promise<{ w: WidgetClient; ready: Record<string, any> }> {
  const w = await connectWidget(url);
  cleanups.push(() => w.close());
  w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  return { w, ready: await w.next((f) => f.type === 'ready') };
}

async function history(url: string, conversationCustomer: string): Promise<string[]> {
  const { w, ready } = await widget(url, conversationCustomer);
  w.close();
  return ready.history.map((h: { role: string; text: string }) => `${h.role}:${h.text}`);
}

/**
 * Two nodes on a fresh database, and a customer on node A whose message is acknowledged and whose turn is held in
 * the model (the message contains `slowWord`): the start of every mid-turn takeover test.
 */
async function turnHeldOnA(o: { slowWord: string; slowMs?: number; customer: string; text: string }) {
  const db = await createMigratedTestDatabase();
  const llm = await model({ slowWord: o.slowWord, slowMs: o.slowMs });
  const a = await node(db, 'node-a', llm);
  const b = await node(db, 'node-b', llm);
  const onA = await widget(a.url, o.customer);
  onA.w.send({ type: 'message', id: 'm1', text: o.text });
  await onA.w.next((f) => f.type === 'ack' && f.id === 'm1');
  await expect.poll(() => llm.requests.length, { timeout: 10_000 }).toBeGreaterThan(0);
  return { db, llm, a, b, onA };
}

describe('several Parley nodes on one PostgreSQL', () => {
  it('a widget on each node for one customer: the conversation has one owner, each message is answered once, and both widgets see every reply', async () => {
    const db = await createMigratedTestDatabase();
    const llm = await model();
    const a = await node(db, 'node-a', llm);
    const b = await node(db, 'node-b', llm);
    const onA = await widget(a.url, 'both-1');
    const onB = await widget(b.url, 'both-1');

    for (const [i, w] of [onA.w, onB.w, onA.w, onB.w].entries()) {
      w.send({ type: 'message', id: `m${i}`, text: `question ${i}` });
      await w.next((f) => f.type === 'ack' && f.id === `m${i}`);
      // Both widgets get the reply, whichever node owns the conversation.
      await onA.w.next((f) => f.type === 'message' && f.role === 'assistant' && f.text === `re: question ${i}`, 15_000);
      await onB.w.next((f) => f.type === 'message' && f.role === 'assistant' && f.text === `re: question ${i}`, 15_000);
    }
    const owners = await sql<{ node_id: string }>(db, 'SELECT node_id FROM conversation_owners');
    expect(owners).toHaveLength(1);
    expect(await history(b.url, 'both-1')).toEqual([0, 1, 2, 3].flatMap((i) => [`user:question ${i}`, `assistant:re: question ${i}`]));
    expect(await sql(db, 'SELECT * FROM conversation_inbox')).toEqual([]);
  });

  it('SIGKILL of the owner in the middle of a turn: another node takes the conversation over within seconds and answers once', async () => {
    const { db, a, b } = await turnHeldOnA({ slowWord: 'slow', customer: 'kill-1', text: 'a slow question' });
    const killedAt = Date.now();
    await a.kill('SIGKILL');

    // The customer's widget reconnects to the other node and gets the answer there.
    const again = await widget(b.url, 'kill-1');
    const inHistory = again.ready.history.find((h: { role: string }) => h.role === 'assistant');
    const answer = inHistory ?? (await again.w.next((f) => f.type === 'message' && f.role === 'assistant', 15_000));
    expect(answer.text).toBe('re: a slow question');
    expect(Date.now() - killedAt).toBeLessThan(1000 + 2000 + 3000); // lease + 2 s, and room for a loaded machine
    await sleep(500);
    expect(await history(b.url, 'kill-1')).toEqual(['user:a slow question', 'assistant:re: a slow question']);
    expect(await sql(db, 'SELECT node_id FROM conversation_owners')).toEqual([{ node_id: 'node-b' }]);
  });

  it('SIGSTOP of the owner past its lease: another node takes over and answers; after SIGCONT the old owner writes and sends nothing', async () => {
    const { db, a, b } = await turnHeldOnA({ slowWord: 'paused', slowMs: 4000, customer: 'stop-1', text: 'paused question' });
    a.child.kill('SIGSTOP');
    cleanups.push(() => a.child.kill('SIGCONT'));

    const onB = await widget(b.url, 'stop-1');
    const answered =
      onB.ready.history.find((h: { role: string }) => h.role === 'assistant') ??
      (await onB.w.next((f) => f.type === 'message' && f.role === 'assistant', 15_000));
    expect(answered.text).toBe('re: paused question');
    expect(await sql(db, 'SELECT node_id FROM conversation_owners')).toEqual([{ node_id: 'node-b' }]);

    // The old owner wakes up; its model call answers (the slow one) and it tries to write the reply.
    a.child.kill('SIGCONT');
    await expect.poll(() => /taken over by another node|lost its cluster lease/.test(a.output()), { timeout: 15_000 }).toBe(true);
    await sleep(1000);
    expect(await history(b.url, 'stop-1')).toEqual(['user:paused question', 'assistant:re: paused question']);
    const replies = await sql<{ n: number }>(db, `SELECT count(*)::int AS n FROM messages WHERE role = 'assistant'`);
    expect(replies).toEqual([{ n: 1 }]);
  }, 60_000); // two waits of up to 15 s each, after starting two nodes, on a machine that may be busy

  it('a node that lost a conversation without noticing (its lease still held) writes nothing: its late reply is fenced off', async () => {
    const { db, a, b, onA } = await turnHeldOnA({ slowWord: 'stolen', slowMs: 3000, customer: 'fence-1', text: 'stolen question' });
    // Another node claims it while A is alive and mid-turn (as after a partition that only the database saw).
    await sql(db, `UPDATE conversation_owners SET node_id = 'node-b', epoch = epoch + 1`);
    // B finds a conversation it owns with a turn waiting, runs it, and both widgets get B's answer.
    await onA.w.next((f) => f.type === 'message' && f.role === 'assistant' && f.text === 're: stolen question', 15_000);
    // A's model answers later; A's write is refused by the epoch, so it stores and sends nothing.
    await expect.poll(() => /taken over by another node/.test(a.output()), { timeout: 15_000 }).toBe(true);
    await sleep(500);
    expect(await history(b.url, 'fence-1')).toEqual(['user:stolen question', 'assistant:re: stolen question']);
    await expect(onA.w.next((f) => f.type === 'message' && f.role === 'assistant', 500)).rejects.toThrow();
  });

  it('a message sent to node B for a conversation node A owns goes through A’s inbox: A answers, and the widget on B gets the reply', async () => {
    const db = await createMigratedTestDatabase();
    const llm = await model();
    const a = await node(db, 'node-a', llm);
    const b = await node(db, 'node-b', llm);
    const onA = await widget(a.url, 'inbox-1');
    onA.w.send({ type: 'message', id: 'm1', text: 'first' });
    await onA.w.next((f) => f.type === 'message' && f.role === 'assistant', 15_000);
    expect(await sql(db, 'SELECT node_id FROM conversation_owners')).toEqual([{ node_id: 'node-a' }]);
    const onB = await widget(b.url, 'inbox-1');
    onB.w.send({ type: 'message', id: 'm2', text: 'second, via B' });
    await onB.w.next((f) => f.type === 'ack' && f.id === 'm2');
    await onB.w.next((f) => f.type === 'message' && f.role === 'assistant' && f.text === 're: second, via B', 15_000);
    expect(await sql(db, 'SELECT node_id FROM conversation_owners')).toEqual([{ node_id: 'node-a' }]);
    expect(await sql(db, 'SELECT * FROM conversation_inbox')).toEqual([]);
  });

  it('a confirmation prompt of a conversation node A owns reaches a widget on node B, and B’s answer reaches A: the write runs once', async () => {
    const db = await createMigratedTestDatabase();
    const llm = await startFakeOpenAi();
    cleanups.push(() => llm.close());
    llm.fallback(callThenAnswer('cancelOrder', { orderId: '1001' }, 'Order 1001 is cancelled.'));
    const a = await node(db, 'node-a', llm);
    const b = await node(db, 'node-b', llm);
    const calls: string[] = [];
    cleanups.push(await orderBackend([a.url], 'cancelOrder', { mode: 'write', handler: cancel(calls) }));

    const onA = await widget(a.url, 'confirm-1');
    const onB = await widget(b.url, 'confirm-1');
    onA.w.send({ type: 'message', id: 'm1', text: 'cancel order 1001 please' });
    const prompt = await onB.w.next((f) => f.type === 'confirm', 15_000);
    expect(prompt).toMatchObject({ name: 'cancelOrder', args: { orderId: '1001' } });
    expect(await sql(db, 'SELECT node_id FROM conversation_owners')).toEqual([{ node_id: 'node-a' }]);
    onB.w.send({ type: 'confirm', id: prompt.id, approve: true });
    await onB.w.next((f) => f.type === 'message' && f.role === 'assistant' && f.text === 'Order 1001 is cancelled.', 15_000);
    await onA.w.next((f) => f.type === 'message' && f.role === 'assistant' && f.text === 'Order 1001 is cancelled.', 15_000);
    expect(calls).toEqual(['1001']);
  });

  it('a widget on node A while the SDK is connected only to node B; A killed in the middle of the turn: the customer, reconnecting to B, gets exactly one answer', async () => {
    const db = await createMigratedTestDatabase();
    const llm = await startFakeOpenAi();
    cleanups.push(() => llm.close());
    llm.fallback(callThenAnswer('orderStatus', { orderId: '7' }, 'Order 7 has shipped.'));
    const a = await node(db, 'node-a', llm);
    const b = await node(db, 'node-b', llm);
    const invocations: string[] = [];
    cleanups.push(
      await orderBackend([b.url], 'orderStatus', {
        handler: async (_args, ctx) => {
          invocations.push(ctx.invocationId);
          if (invocations.length === 1) await sleep(4000); // the call A is waiting on when it dies
          return { status: 'shipped' };
        },
      }),
    );
    // A sees B's function (the catalog is cluster-wide).
    await expect.poll(async () => (await (await fetch(`${a.url}/__test__/sdk/functions`)).json()) as string[], { timeout: 10_000 }).toContain('orderStatus');

    const onA = await widget(a.url, 'judged-1');
    onA.w.send({ type: 'message', id: 'm1', text: 'where is order 7?' });
    await onA.w.next((f) => f.type === 'ack' && f.id === 'm1');
    await expect.poll(() => invocations.length, { timeout: 10_000 }).toBe(1);
    // Killed once the call is stored with the snapshot that holds it (before that, the turn would ask the model again).
    await expect.poll(async () => (await sql(db, `SELECT 1 FROM messages WHERE role = 'tool'`)).length, { timeout: 10_000 }).toBe(1);
    expect(await sql(db, 'SELECT node_id FROM conversation_owners')).toEqual([{ node_id: 'node-a' }]);
    await a.kill('SIGKILL');

    const onB = await widget(b.url, 'judged-1');
    const answer =
      onB.ready.history.find((h: { role: string }) => h.role === 'assistant') ??
      (await onB.w.next((f) => f.type === 'message' && f.role === 'assistant', 20_000));
    expect(answer.text).toBe('Order 7 has shipped.');
    await sleep(4500); // the first call returns now: nothing more may come of it
    expect(await history(b.url, 'judged-1')).toEqual(['user:where is order 7?', 'assistant:Order 7 has shipped.']);
    expect(new Set(invocations).size).toBe(1); // the resumed turn called again with the same invocationId
  });

  it('a confirmation deadline of a killed node’s conversation fires on the node that takes it over (a stored due time, not a timer of the dead process)', async () => {
    const db = await createMigratedTestDatabase();
    const llm = await startFakeOpenAi();
    cleanups.push(() => llm.close());
    llm.fallback(callThenAnswer('cancelOrder', { orderId: '9' }, 'Nothing was cancelled.'));
    const extra = { safety: { confirmation_timeout_seconds: 4 } };
    const a = await node(db, 'node-a', llm, extra);
    const b = await node(db, 'node-b', llm, extra);
    const calls: string[] = [];
    cleanups.push(await orderBackend([a.url, b.url], 'cancelOrder', { mode: 'write', handler: cancel(calls) }));
    const onA = await widget(a.url, 'deadline-1');
    onA.w.send({ type: 'message', id: 'm1', text: 'cancel order 9' });
    await onA.w.next((f) => f.type === 'confirm', 15_000);
    const askedAt = Date.now();
    await a.kill('SIGKILL');

    const onB = await widget(b.url, 'deadline-1');
    const expired = await onB.w.next((f) => f.type === 'confirmation' && f.outcome === 'expired', 15_000);
    expect(expired).toMatchObject({ type: 'confirmation', outcome: 'expired' });
    expect(Date.now() - askedAt).toBeGreaterThanOrEqual(3500); // not before its deadline
    await onB.w.next((f) => f.type === 'message' && f.role === 'assistant' && f.text === 'Nothing was cancelled.', 15_000);
    expect(calls).toEqual([]);
  });
});
