// WhatsApp across several Parley processes on one PostgreSQL (issue 17, parts 6 and 8): webhooks spread over two
// nodes, one of them SIGKILLed right after acknowledging its share, and a node killed in the middle of a WhatsApp turn
// held by a slow SDK tool. Every acknowledged message is answered exactly once, matched per message id through
// biz_opaque_callback_data on a local stand-in for Meta's Graph API.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeGraph, type FakeGraph } from '../support/fake-graph.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { spawnParley, tempDir, type ParleyProcess } from '../support/parley.ts';
import { createMigratedTestDatabase } from '../support/shared-postgres.ts';
import { sql } from '../support/sql.ts';
import { callThenAnswer, orderBackend } from '../support/order-backend.ts';
import { postWebhook, sleep, textMessage, WA, webhookBody } from '../support/whatsapp.ts';
import { parseWebhook } from '../../src/whatsapp/webhook-payload.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** out:conv_whatsapp_<customer>:wa:<wamid>:r → wamid */
const answeredId = (callbackData: string | undefined) => /:wa:(.+):r$/.exec(callbackData ?? '')?.[1];
const phone = (i: number) => `+1555400${String(i).padStart(4, '0')}`;

async function node(db: string, nodeId: string, graph: FakeGraph, extra: Record<string, unknown> = {}): Promise<ParleyProcess> {
  const p = await spawnParley({
    storagePath: tempDir(),
    config: {
      storage: { engine: 'postgres', url: db },
      cluster: { node_id: nodeId, lease_seconds: 1 },
      // A send cut off by the kill before Meta answered is resent only after this grace without a status webhook
      // (exactly once over "at once"; its default, 120 s, is longer than this test waits).
      channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, uncertain_grace_ms: 10_000, ...WA } },
      ...extra,
    },
  });
  cleanups.push(() => p.kill('SIGKILL'));
  return p;
}

/** Waits until every id in `acked` has an answer delivered by the fake Graph API; then each must have exactly one. */
async function expectEachAnsweredOnce(graph: FakeGraph, acked: string[], timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const answered = new Set(graph.delivered().map((r) => answeredId(r.body.biz_opaque_callback_data)));
    if (acked.every((id) => answered.has(id))) break;
    if (Date.now() > end) throw new Error(`unanswered: ${acked.filter((id) => !answered.has(id)).join(', ')}`);
    await sleep(100);
  }
  await sleep(1000); // a doubled answer would come now
  const perId = new Map<string, number>();
  for (const r of graph.delivered()) {
    const id = answeredId(r.body.biz_opaque_callback_data);
    perId.set(id!, (perId.get(id!) ?? 0) + 1);
  }
  for (const id of acked) expect(perId.get(id), `answers to ${id}`).toBe(1);
  expect([...perId.entries()].filter(([, n]) => n > 1)).toEqual([]);
}

describe('WhatsApp on several nodes', () => {
  it('webhooks spread over two nodes, one SIGKILLed right after its acknowledgements: every acknowledged message is answered exactly once', async () => {
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const db = await createMigratedTestDatabase();
    const a = await node(db, 'node-a', graph);
    const b = await node(db, 'node-b', graph);
    graph.sendStatusesTo(`${b.url}/wa/webhook`, WA.app_secret);
    // Sends answer slowly at first, so the kill finds replies still going out.
    graph.failNext(...Array.from({ length: 20 }, () => ({ slowMs: 300 })));

    const messages = Array.from({ length: 3 }, (_, k) =>
      Array.from({ length: 20 }, (_, i) => textMessage(phone(i), `hello ${k}`, `wamid.cluster.${i}.${k}`)),
    ).flat();
    const acked: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 6 }, async (_, worker) => {
        while (next < messages.length) {
          const m = messages[next++];
          const target = worker % 2 === 0 ? a : b;
          const res = await postWebhook(target.url, webhookBody([m]));
          if (res.status === 200 && (await res.json()).queued === 1) acked.push(m.id);
        }
      }),
    );
    expect(acked).toHaveLength(messages.length);
    await a.kill('SIGKILL');
    await expectEachAnsweredOnce(graph, acked);
  }, 120_000);

  it('SIGKILL of the node running a WhatsApp turn while a slow SDK tool holds it: the other node answers once', async () => {
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const llm = await startFakeOpenAi();
    cleanups.push(() => llm.close());
    llm.fallback(callThenAnswer('orderStatus', { orderId: '7' }, 'Your order has shipped.'));
    const db = await createMigratedTestDatabase();
    const extra = { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', max_retries: 0 }, safety: { invoke_timeout_ms: 20_000 } };
    const nodes = { 'node-a': await node(db, 'node-a', graph, extra), 'node-b': await node(db, 'node-b', graph, extra) };
    graph.sendStatusesTo(`${nodes['node-b'].url}/wa/webhook`, WA.app_secret);

    // The backend's SDK, connected to both nodes; the first call is slow enough for the kill.
    const calls: string[] = [];
    cleanups.push(
      await orderBackend(
        Object.values(nodes).map((p) => p.url),
        'orderStatus',
        {
          handler: async (_args, ctx) => {
            calls.push(ctx.invocationId);
            if (calls.length === 1) await sleep(15_000);
            return { status: 'shipped' };
          },
        },
      ),
    );

    const m = textMessage(phone(99), 'where is my order?', 'wamid.cluster.slow');
    expect((await postWebhook(nodes['node-a'].url, webhookBody([m]))).status).toBe(200);
    await expect.poll(() => calls.length, { timeout: 15_000 }).toBe(1);
    // Killed once the call is stored (its `tool` record commits with the snapshot that holds it): a kill before that
    // loses the model's decision too, and the turn asks the model again, for a new call with a new invocationId.
    await expect.poll(async () => (await sql(db, `SELECT 1 FROM messages WHERE role = 'tool'`)).length, { timeout: 10_000 }).toBe(1);
    const [{ node_id: owner }] = await sql<{ node_id: 'node-a' | 'node-b' }>(db, 'SELECT node_id FROM conversation_owners');
    await nodes[owner].kill('SIGKILL');

    await expectEachAnsweredOnce(graph, [m.id], 30_000);
    expect(graph.delivered().map((r) => r.body.text?.body)).toEqual(['Your order has shipped.']);
    expect(new Set(calls).size).toBe(1); // the resumed turn calls again with the same invocationId
  }, 90_000);

  it('a job a node committed and died before announcing (PostgreSQL announces after commit) is run by the node that sees it die', async () => {
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const db = await createMigratedTestDatabase();
    const a = await node(db, 'node-a', graph);
    const b = await node(db, 'node-b', graph); // the node that must see node-a die
    // Both fully up first: each has answered a message (its queues run) and LISTENs. A queue that started, or a LISTEN
    // connection that opened, after the job below was stored would find it by its own first look.
    const warmUp = [a, b].map((p, i) => ({ p, m: textMessage(phone(70 + i), 'warming up', `wamid.cluster.warm.${i}`) }));
    for (const { p, m: w } of warmUp) expect((await postWebhook(p.url, webhookBody([w]))).status).toBe(200);
    await expectEachAnsweredOnce(
      graph,
      warmUp.map((w) => w.m.id),
      30_000,
    );
    await expect
      .poll(
        async () =>
          (await sql<{ n: number }>(db, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`))[0].n,
        {
          timeout: 10_000,
        },
      )
      .toBeGreaterThanOrEqual(2);
    // What node A's webhook would have committed, with the notice it never sent (it died in between): the inbound
    // job row, stored the way jobs.ts stores one.
    const m = textMessage(phone(77), 'hello from a dying node', 'wamid.cluster.unannounced');
    const [job] = parseWebhook(webhookBody([m])).messages;
    await sql(
      db,
      `WITH claimed AS (INSERT INTO job_ids (queue, id, seq) VALUES ('wa-inbound', $1, parley_next_job_seq('wa-inbound', $2)) RETURNING seq)
       INSERT INTO jobs (queue, id, seq, key, payload, attempts, run_at, enqueued_at) SELECT 'wa-inbound', $1, seq, $2, $3, 0, $4, $4 FROM claimed`,
      [`wa:${m.id}`, job.from, JSON.stringify(job), Date.now()],
    );
    await sleep(1500); // nobody was told: nothing runs it yet
    expect(graph.delivered().filter((r) => answeredId(r.body.biz_opaque_callback_data) === m.id)).toHaveLength(0);
    await a.kill('SIGKILL');
    await expectEachAnsweredOnce(graph, [m.id], 15_000);
  }, 60_000);
});
