// Issue 35, part 4: the inbox's live feed across a cluster. Two real Parley nodes on one PostgreSQL; Ada's inbox socket
// on node A, Bob's on node B. A handoff, a claim and a customer's message happening on A reach B's socket (and A's),
// each measured; a claim race between the nodes gives one 409 with the holder's name; presence crosses nodes; the
// socket refuses another origin and a request without a session; resolves from the node that does not own the
// conversation reach its history through the cluster inbox. Starts its nodes on PostgreSQL itself (NO_ENGINE).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { SignedInAgent } from '../support/agents.ts';
import { DEADLINE_MS, inboxApi, namedAgent } from '../support/inbox.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const closers: (() => Promise<unknown> | unknown)[] = [];
let a: TestParley;
let b: TestParley;
let ada: SignedInAgent;
let bob: SignedInAgent;
let w: WidgetClient;
const conversationId = 'conv_web_cust-cluster';

interface Feed {
  frames: { type: string; kind?: string; conversationId?: string; at?: number; agents?: { name: string }[]; heardAt: number }[];
  next(pred: (f: Feed['frames'][number]) => boolean): Promise<Feed['frames'][number]>;
}

async function feed(p: TestParley, agent: SignedInAgent): Promise<Feed> {
  const host = new URL(p.url()).host;
  const ws = new WebSocket(`ws://${host}/api/v1/inbox/live`, { headers: { cookie: agent.cookie, origin: `http://${host}` } });
  closers.push(() => ws.close());
  const frames: Feed['frames'] = [];
  ws.on('message', (d) => frames.push(Object.assign(JSON.parse(String(d)), { heardAt: Date.now() })));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    frames,
    async next(pred) {
      const until = Date.now() + DEADLINE_MS;
      for (;;) {
        const f = frames.find(pred);
        if (f) return f;
        if (Date.now() > until) throw new Error(`no matching frame; got ${JSON.stringify(frames).slice(-1500)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

/** The upgrade refused: its HTTP status. */
function refusedUpgrade(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('open', () => {
      ws.close();
      reject(new Error('the socket was accepted'));
    });
    ws.once('error', () => undefined);
  });
}

beforeAll(async () => {
  const url = await createTestDatabase();
  for (const id of ['node-a', 'node-b']) {
    const p = await startParley({ config: { storage: { engine: 'postgres', url }, cluster: { node_id: id, lease_seconds: 5 } } });
    closers.push(() => p.close());
    if (id === 'node-a') a = p;
    else b = p;
  }
  ada = await namedAgent(a, 'Ada');
  bob = await namedAgent(b, 'Bob');
  w = await startWidgetSession(a.url(), { customerId: 'cust-cluster', email: 'cust-cluster@example.com' });
  closers.push(() => w.close());
  w.send({ type: 'message', id: 'm1', text: 'hello' });
  await w.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE_MS);
}, 120_000);

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await Promise.resolve(close()).catch(() => undefined);
});

describe('the inbox live feed on two PostgreSQL nodes', () => {
  it('refuses another origin (403) and a socket without a session (401)', async () => {
    const host = new URL(a.url()).host;
    expect(await refusedUpgrade(`ws://${host}/api/v1/inbox/live`, { cookie: ada.cookie, origin: 'http://evil.example' })).toBe(403);
    expect(await refusedUpgrade(`ws://${host}/api/v1/inbox/live`, { origin: `http://${host}` })).toBe(401);
  });

  it("a handoff, a claim and a customer's message on node A reach the inbox on node B (and A); presence crosses nodes", async () => {
    const onA = await feed(a, ada);
    const onB = await feed(b, bob);
    // Presence: Ada's page on A is online for Bob's node.
    await expect
      .poll(async () => (await inboxApi(b, bob).call('GET', '/agents')).body.items.find((x: { name: string }) => x.name === 'Ada')?.presence, {
        timeout: DEADLINE_MS,
      })
      .toBe('online');
    const handedAt = Date.now();
    const r = await fetch(`${a.url()}/conversations/${conversationId}/handoff`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'asked for a person' }),
    });
    expect(r.status).toBe(200);
    const heardB = await onB.next((f) => f.type === 'event' && f.kind === 'handoff' && f.conversationId === conversationId);
    const heardA = await onA.next((f) => f.type === 'event' && f.kind === 'handoff');
    console.log(`[cluster inbox] handoff heard on node B after ${heardB.heardAt - handedAt} ms, on node A after ${heardA.heardAt - handedAt} ms`);
    expect((await inboxApi(b, bob).list('waiting')).items.map((i: { conversationId: string }) => i.conversationId)).toEqual([conversationId]);

    // A claim race between the nodes: one wins, the other is told who.
    const [fromA, fromB] = await Promise.all([inboxApi(a, ada).act(conversationId, 'claim'), inboxApi(b, bob).act(conversationId, 'claim')]);
    expect([fromA.status, fromB.status].sort()).toEqual([200, 409]);
    const winner = fromA.status === 200 ? 'Ada' : 'Bob';
    const loser = fromA.status === 200 ? fromB : fromA;
    expect(loser.body.error.message).toBe(`${winner} has this conversation`);
    const claimed = await (winner === 'Ada' ? onB : onA).next((f) => f.type === 'event' && f.kind === 'claimed');
    expect(claimed).toMatchObject({ conversationId, agent: { name: winner } });

    const sentAt = Date.now();
    w.send({ type: 'message', id: 'm2', text: 'are you there?' });
    const customer = await onB.next((f) => f.type === 'event' && f.kind === 'customer');
    console.log(`[cluster inbox] customer message heard on node B after ${customer.heardAt - sentAt} ms`);
    expect(customer.conversationId).toBe(conversationId);
    expect(customer.heardAt - handedAt).toBeLessThan(DEADLINE_MS);
  });

  it("resolves from the node that does not own the conversation reach its owner's history (the cluster inbox), each once", async () => {
    const id = 'conv_web_cust-cluster-resolve';
    const c = await startWidgetSession(a.url(), { customerId: 'cust-cluster-resolve', email: 'cust-cluster-resolve@example.com' });
    closers.push(() => c.close());
    c.send({ type: 'message', id: 'm1', text: 'hello' });
    await c.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE_MS);
    const r = await fetch(`${a.url()}/conversations/${id}/handoff`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.status).toBe(200);
    await c.next((f) => f.type === 'status' && f.mode === 'human', DEADLINE_MS);
    // Node A owns it (the widget is there); Bob resolves it on node B, then again once it is with the assistant.
    expect((await inboxApi(b, bob).act(id, 'claim')).status).toBe(200);
    expect((await inboxApi(b, bob).act(id, 'resolve')).status).toBe(200);
    await c.next((f) => f.type === 'status' && f.mode === 'assistant', DEADLINE_MS);
    expect((await inboxApi(b, bob).act(id, 'resolve')).status).toBe(200);
    const byBob = { agentId: bob.agentId, name: 'Bob' };
    const resolves = async () =>
      (await inboxApi(b, bob).whole(id)).transcript
        .filter((e: { kind: string }) => e.kind === 'resolved')
        .map((e: { id: string; by: unknown; released?: boolean }) => ({ record: e.id.split(':')[0], by: e.by, released: e.released === true }));
    await expect.poll(resolves, { timeout: DEADLINE_MS, interval: 100 }).toEqual([
      { record: 'r', by: byBob, released: true },
      { record: 'v', by: byBob, released: false },
    ]);
  });
});
