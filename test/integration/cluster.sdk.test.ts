// The SDK across nodes (issue 17, part 4): two real Parley nodes on one PostgreSQL, the real SDK connected to node B
// only. Node A lists B's functions, calls them (the same outcome, timeout and idempotency as on one node), delivers
// WhatsApp replies through B's onSend, and its handoff notices reach B's SDK; a node SIGKILLed mid-call gives the
// caller a clean failure within the call's timeout. This file starts its nodes on PostgreSQL itself, whatever the
// run's engine (it is in vitest.config.ts's NO_ENGINE list, so it runs once).
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type HandoffNotice, type ParleyClient } from '../../sdk/src/index.ts';
import { spawnParley, startParley, TEST_SECRET, tempDir, type TestParley } from '../support/parley.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { until } from '../support/whatsapp.ts';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

type NodeConfig = NonNullable<Parameters<typeof startParley>[0]>['config'];

async function node(url: string, nodeId: string, config: NodeConfig = {}): Promise<TestParley> {
  const p = await startParley({ config: { ...config, storage: { engine: 'postgres', url }, cluster: { node_id: nodeId, lease_seconds: 5 } } });
  closers.push(() => p.close());
  return p;
}

async function sdk(url: string, setup: (c: ParleyClient) => void): Promise<ParleyClient> {
  const c = createClient();
  setup(c);
  await c.listen({ url, secret: TEST_SECRET });
  closers.push(() => c.close());
  return c;
}

const functions = async (p: { url(): string }): Promise<string[]> => (await fetch(`${p.url()}/__test__/sdk/functions`)).json();
const ready = async (p: { url(): string }) => (await fetch(`${p.url()}/ready`)).json();
const CTX = { customerId: 'cust-1', channel: 'web' as const, conversationId: 'conv_web_cust-1' };
const orderStatus = z.object({ orderId: z.string() });

describe('the SDK across nodes (PostgreSQL)', () => {
  it('node A lists the functions of an SDK connected to node B within a heartbeat; /ready’s checks stay per node; they go when it closes', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const b = await node(url, 'node-b');
    const started = Date.now();
    const client = await sdk(b.url(), (c) => {
      c.expose('getOrderStatus', { description: 'Get the status of an order', parameters: orderStatus }, async () => ({}));
      c.expose('cancelOrder', { description: 'Cancel an order', parameters: orderStatus, mode: 'write' }, async () => ({}));
    });
    await expect.poll(() => functions(a), { timeout: 15_000, interval: 20 }).toEqual(['getOrderStatus', 'cancelOrder']);
    expect(Date.now() - started).toBeLessThan(1000); // a heartbeat: a fifth of the 5 s lease
    expect(a.runtime.clusterHub.catalog().find((f) => f.name === 'cancelOrder')).toMatchObject({ mode: 'write', description: 'Cancel an order' });
    expect((await ready(a)).checks.sdk).toEqual({ connected: false, functions: 0 });
    expect((await ready(b)).checks.sdk).toEqual({ connected: true, functions: 2 });

    await client.close();
    await expect.poll(() => functions(a), { timeout: 15_000, interval: 20 }).toEqual([]);
  });

  it('a node started after the SDK registered elsewhere asks, and lists its functions at once', async () => {
    const url = await createTestDatabase();
    const b = await node(url, 'node-b');
    await sdk(b.url(), (c) => c.expose('getOrderStatus', { parameters: orderStatus }, async () => ({})));
    const a = await node(url, 'node-a');
    const started = Date.now();
    await expect.poll(() => functions(a), { timeout: 15_000, interval: 20 }).toEqual(['getOrderStatus']);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('among other nodes the most recent registration of a name wins; when it closes the next one serves', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const b = await node(url, 'node-b');
    const c = await node(url, 'node-c');
    const expose = (p: TestParley, status: string) =>
      sdk(p.url(), (client) => client.expose('getOrderStatus', { parameters: orderStatus }, async () => ({ status })));
    await expose(b, 'from-b');
    await expect.poll(() => functions(a), { timeout: 15_000 }).toEqual(['getOrderStatus']);
    await new Promise((r) => setTimeout(r, 20)); // registrations are ordered by the nodes' wall clocks (ms)
    const onC = await expose(c, 'from-c');
    await expect
      .poll(async () => (await a.runtime.clusterHub.invoke('getOrderStatus', { orderId: '1' }, CTX)) as unknown, { timeout: 15_000 })
      .toEqual({ ok: true, data: { status: 'from-c' } });
    expect(a.runtime.clusterHub.catalog().map((f) => f.connectionId)).toEqual([expect.stringMatching(/^node-c\//)]);
    await onC.close();
    await expect
      .poll(async () => (await a.runtime.clusterHub.invoke('getOrderStatus', { orderId: '1' }, CTX)) as unknown, { timeout: 15_000 })
      .toEqual({ ok: true, data: { status: 'from-b' } });
  });

  it('an invoke on A runs B’s handler with the same invocation id and context; a widget on A gets B’s data; a local registration wins', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const b = await node(url, 'node-b');
    const calls: { invocationId: string; customerId: string; args: unknown }[] = [];
    await sdk(b.url(), (c) =>
      c.expose('getOrderStatus', { description: 'Get the status of an order', parameters: orderStatus }, async (args, ctx) => {
        calls.push({ invocationId: ctx.invocationId, customerId: ctx.customerId, args });
        return { orderId: args.orderId, status: 'shipped-from-b' };
      }),
    );
    await expect.poll(() => functions(a), { timeout: 15_000 }).toEqual(['getOrderStatus']);

    expect(await a.runtime.clusterHub.invoke('getOrderStatus', { orderId: '1001' }, CTX, { invocationId: 'inv-1' })).toEqual({
      ok: true,
      data: { orderId: '1001', status: 'shipped-from-b' },
    });
    expect(calls).toEqual([{ invocationId: 'inv-1', customerId: 'cust-1', args: { orderId: '1001' } }]);
    expect(await a.runtime.clusterHub.invoke('nope', {}, CTX)).toMatchObject({ ok: false, error: { code: 'unknown_function' } });
    // Longer than a NOTIFY payload, both ways (the bus stores those): the same data back.
    const long = 'x'.repeat(20_000);
    expect(await a.runtime.clusterHub.invoke('getOrderStatus', { orderId: long }, CTX)).toEqual({
      ok: true,
      data: { orderId: long, status: 'shipped-from-b' },
    });

    const w = await startWidgetSession(a.url(), { customerId: 'cust-w', email: 'cust-w@example.com' });
    closers.push(async () => w.close());
    w.send({ type: 'message', id: 'm1', text: 'what is the status of order 1001?' });
    const reply = await w.next((f) => f.type === 'message');
    expect(reply.text).toContain('shipped-from-b');
    expect(calls.at(-1)).toMatchObject({ customerId: 'cust-w', args: { orderId: '1001' } });

    // The same name registered on A too: A calls its own.
    await sdk(a.url(), (c) => c.expose('getOrderStatus', { parameters: orderStatus }, async (args) => ({ orderId: args.orderId, status: 'local-to-a' })));
    expect(await a.runtime.clusterHub.invoke('getOrderStatus', { orderId: '7' }, CTX)).toEqual({ ok: true, data: { orderId: '7', status: 'local-to-a' } });
  });

  it('the same invocation id joins the call in flight, from A and from B; a handler’s error code and a timeout come back as on one node', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const b = await node(url, 'node-b');
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await sdk(b.url(), (c) => {
      c.expose('refund', { parameters: orderStatus, mode: 'write' }, async (args) => {
        runs++;
        await gate;
        return { refunded: args.orderId };
      });
      c.expose('failing', { parameters: orderStatus }, async () => {
        throw Object.assign(new Error('Order 42 does not exist'), { code: 'not_found' });
      });
      c.expose('slow', { parameters: orderStatus }, () => new Promise(() => undefined));
    });
    await expect.poll(() => functions(a), { timeout: 15_000 }).toEqual(['refund', 'failing', 'slow']);

    const args = { orderId: '42' };
    const first = a.runtime.clusterHub.invoke('refund', args, CTX, { invocationId: 'inv-refund' });
    const again = a.runtime.clusterHub.invoke('refund', args, CTX, { invocationId: 'inv-refund' });
    await until(
      () => runs,
      (n) => n === 1,
    );
    const onB = b.runtime.clusterHub.invoke('refund', args, CTX, { invocationId: 'inv-refund' });
    await new Promise((r) => setTimeout(r, 100));
    release();
    expect(await Promise.all([first, again, onB])).toEqual(Array(3).fill({ ok: true, data: { refunded: '42' } }));
    expect(runs).toBe(1);

    const failedOnA = await a.runtime.clusterHub.invoke('failing', args, CTX);
    expect(failedOnA).toEqual({ ok: false, error: { code: 'not_found', message: 'Order 42 does not exist' } });
    expect(failedOnA).toEqual(await b.runtime.clusterHub.invoke('failing', args, CTX));

    const startedAt = Date.now();
    const timedOut = await a.runtime.clusterHub.invoke('slow', args, CTX, { timeoutMs: 500 });
    const took = Date.now() - startedAt;
    expect(timedOut).toEqual({ ok: false, error: { code: 'timeout', message: 'The SDK function "slow" did not answer in time' } });
    expect(timedOut).toEqual(await b.runtime.clusterHub.invoke('slow', args, CTX, { timeoutMs: 50 }));
    expect(took).toBeGreaterThanOrEqual(490);
    expect(took).toBeLessThan(1500);
  });

  it('a node SIGKILLed mid-call: the caller gets disconnected as soon as it is seen dead, well within the call’s timeout', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const b = await spawnParley({ storagePath: tempDir(), config: { storage: { engine: 'postgres', url }, cluster: { node_id: 'node-b', lease_seconds: 5 } } });
    closers.push(() => b.kill('SIGKILL'));
    let called!: () => void;
    const invoked = new Promise<void>((r) => (called = r));
    await sdk(b.url, (c) =>
      c.expose('slow', { parameters: orderStatus }, () => {
        called();
        return new Promise(() => undefined);
      }),
    );
    await expect.poll(() => functions(a), { timeout: 15_000 }).toEqual(['slow']);

    const call = a.runtime.clusterHub.invoke('slow', { orderId: '1' }, CTX, { timeoutMs: 15_000 });
    await invoked;
    await b.kill('SIGKILL');
    const killedAt = Date.now();
    const outcome = await call;
    expect(outcome).toMatchObject({ ok: false, error: { code: 'disconnected' } });
    expect(Date.now() - killedAt).toBeLessThan(5000);
    // And B's functions are gone from A's catalog.
    expect(await functions(a)).toEqual([]);
  });

  it('a node that stops answering while its lease still holds (SIGSTOP): the caller’s own timeout answers, on time', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const b = await spawnParley({ storagePath: tempDir(), config: { storage: { engine: 'postgres', url }, cluster: { node_id: 'node-b', lease_seconds: 5 } } });
    closers.push(() => b.kill('SIGKILL'));
    let called!: () => void;
    const invoked = new Promise<void>((r) => (called = r));
    await sdk(b.url, (c) =>
      c.expose('slow', { parameters: orderStatus }, async () => {
        called();
        await new Promise((r) => setTimeout(r, 300));
        return { late: true }; // B is stopped by then: nothing carries this back
      }),
    );
    await expect.poll(() => functions(a), { timeout: 15_000 }).toEqual(['slow']);

    const startedAt = Date.now();
    const call = a.runtime.clusterHub.invoke('slow', { orderId: '1' }, CTX, { timeoutMs: 1000 });
    await invoked;
    b.child.kill('SIGSTOP');
    const outcome = await call;
    const took = Date.now() - startedAt;
    expect(outcome).toEqual({ ok: false, error: { code: 'timeout', message: 'The SDK function "slow" did not answer in time' } });
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(2500);
    expect(a.runtime.cluster.view().nodes.find((n) => n.nodeId === 'node-b')?.alive).toBe(true); // not seen dead yet
  });

  it('WhatsApp with provider sdk on A delivers through the onSend of an SDK connected to B', async () => {
    const url = await createTestDatabase();
    // Only A runs the WhatsApp channel, so the reply is sent from A whichever node's worker takes the inbound job.
    const a = await node(url, 'node-a', { channels: { whatsapp: { enabled: true, provider: 'sdk' } } });
    const b = await node(url, 'node-b');
    expect(a.runtime.clusterHub.canSend()).toBe(false);
    const sent: { to: string; content: string; id: string }[] = [];
    await sdk(b.url(), (c) =>
      c.onSend(async (m, meta) => {
        sent.push({ to: m.to, content: m.content, id: meta.id });
        return { messageId: `b-${sent.length}` };
      }),
    );
    await expect.poll(() => a.runtime.clusterHub.canSend(), { timeout: 15_000 }).toBe(true);
    expect(b.runtime.clusterHub.canSend()).toBe(true);

    // Through the hub: the message's id is the idempotency key, as on one node.
    const message = { id: 'out-direct', channel: 'whatsapp' as const, to: '+15550100000', content: 'hi' };
    expect(await a.runtime.clusterHub.send(message)).toEqual({ ok: true, messageId: 'b-1' });

    // And a whole turn: a message ingested on A, answered on A, delivered by B's SDK.
    const ingester = await sdk(a.url(), () => undefined);
    await ingester.ingest({ channel: 'whatsapp', from: '+15550201010', text: 'hello', messageId: 'in-1' });
    await until(
      () => sent,
      (s) => s.length === 2,
    );
    expect(sent[1]).toMatchObject({ to: '+15550201010', id: expect.stringMatching(/^out:/) });
    expect(sent[1].content.length).toBeGreaterThan(0);
  });

  it('handoff notices of a conversation on A reach the SDK connections of B (and of A), once each', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const b = await node(url, 'node-b');
    const onB: HandoffNotice[] = [];
    const onA: HandoffNotice[] = [];
    await sdk(b.url(), (c) => c.onHandoff((n) => void onB.push(n)));
    await sdk(a.url(), (c) => c.onHandoff((n) => void onA.push(n)));

    const w = await startWidgetSession(a.url(), { customerId: 'cust-h', email: 'cust-h@example.com' });
    closers.push(async () => w.close());
    w.send({ type: 'message', id: 'm1', text: 'Please get me an agent' });
    await until(
      () => onB,
      (n) => n.length === 1,
    );
    expect(onB[0]).toMatchObject({ conversationId: 'conv_web_cust-h', phase: 'requested' });
    await new Promise((r) => setTimeout(r, 300));
    expect(onB).toHaveLength(1);
    expect(onA).toHaveLength(1);
  });
});
