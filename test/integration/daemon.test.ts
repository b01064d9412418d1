// Issue 6: the reflection daemon reviews idle conversations and follows up
// on unresolved ones, once, under the proactive guardrails.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };

async function chat(p: TestParley, customerId: string, text: string, approve?: boolean) {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  await w.next((f) => f.type === 'ready');
  w.send({ type: 'message', id: `${customerId}-1`, text });
  if (approve !== undefined) {
    const c = await w.next((f) => f.type === 'confirm');
    w.send({ type: 'confirm', id: c.id, approve });
  }
  const reply = await w.next((f) => f.type === 'message');
  w.close();
  return reply.text as string;
}

async function events(p: TestParley, type: string) {
  const r = await fetch(`${p.url()}/api/v1/telemetry/events?type=${type}&limit=1000`, { headers: auth });
  return ((await r.json()) as { items: { conversationId: string; data: Record<string, unknown> }[] }).items;
}

async function jump(p: TestParley, offsetMs: number) {
  await fetch(`${p.url()}/__test__/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ offsetMs }) });
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('reflection daemon', () => {
  it('one follow-up for an unresolved conversation, none for a resolved one; opt-in still applies; never twice', async () => {
    const p = await startParley({
      config: {
        proactive: { enabled: true, daily_cap: 3 },
        daemon: { enabled: true, proactive_followup: true, interval_seconds: 3600, idle_minutes: 30 },
      },
    });
    open.push(p);
    const sdk = createClient();
    sdk.expose(
      'getOrderStatus',
      { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
      async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }),
    );
    sdk.expose('cancelOrder', { description: 'Cancel an order', parameters: z.object({ orderId: z.string() }), mode: 'write' }, async () => {
      throw Object.assign(new Error('Order already shipped'), { code: 'not_cancellable' });
    });
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);

    expect(await chat(p, 'resolved-ann', 'status of order 1001')).toMatch(/shipped/);
    expect(await chat(p, 'unresolved-bob', 'cancel order 1002', true)).toMatch(/didn't work/);
    expect(await chat(p, 'unresolved-cy', 'cancel order 1003', true)).toMatch(/didn't work/);
    for (const id of ['resolved-ann', 'unresolved-bob'])
      await fetch(`${p.url()}/proactive/opt-in`, { method: 'POST', headers: auth, body: JSON.stringify({ customerExternalId: `anon:${id}`, optIn: true }) }); // anonymous visitors: their own namespace

    await jump(p, 2 * 3600_000); // idle for 2 h; the hourly cycle fires
    const verdicts = await until(
      () => events(p, 'daemon.verdict'),
      (v) => v.length >= 3,
    );
    const byConv = Object.fromEntries(verdicts.map((v) => [v.conversationId, v.data.verdict]));
    expect(byConv).toEqual({ 'conv_web_resolved-ann': 'resolved', 'conv_web_unresolved-bob': 'unresolved', 'conv_web_unresolved-cy': 'unresolved' });
    const followups = await until(
      () => events(p, 'daemon.followup'),
      (f) => f.length >= 2,
    );
    const result = Object.fromEntries(followups.map((f) => [f.conversationId, f.data.accepted ? 'sent' : f.data.reason]));
    expect(result).toEqual({ 'conv_web_unresolved-bob': 'sent', 'conv_web_unresolved-cy': 'Customer has not opted in' });

    // A crash after the send but before the pending follow-up was cleared: put it back as it was.
    const bob = (await p.services.store.conversations.get('conv_web_unresolved-bob'))!;
    expect(bob.followupPending).toBeUndefined();
    // The store lists it among the pending follow-ups (the engine indexes it with the record).
    await p.services.store.conversations.put(Object.assign({}, bob, { followupPending: { content: 'again?', decidedAt: bob.reflection!.at } }));
    expect(await p.services.store.conversations.withPendingFollowup(10)).toContain('conv_web_unresolved-bob');

    await jump(p, 5 * 3600_000); // more cycles: nothing new to review, nothing sent twice
    await new Promise((r) => setTimeout(r, 500));
    expect(await events(p, 'daemon.verdict')).toHaveLength(3);
    expect((await events(p, 'proactive.accepted')).filter((e) => e.data.dedupKey === 'followup:conv_web_unresolved-bob')).toHaveLength(1);
    expect((await events(p, 'proactive.blocked')).filter((e) => e.data.dedupKey === 'followup:conv_web_unresolved-bob').map((e) => e.data.reason)).toEqual([
      'Duplicate (dedupKey already sent)',
    ]);

    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'unresolved-bob', email: 'unresolved-bob@example.com' });
    const ready = await w.next((f) => f.type === 'ready');
    expect(ready.history.filter((h: { proactive?: boolean }) => h.proactive)).toHaveLength(1);

    const diag = await (await fetch(`${p.url()}/diagnostics`)).json();
    expect(diag.daemon).toMatchObject({ state: 'waiting', reviewedTotal: 3, followupsTotal: 1 });
  });
});
