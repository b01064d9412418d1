// A rolling restart of every node under a steady load (issue 17, part 8): two Parley processes on one PostgreSQL,
// twelve customers whose widgets each send a message every 150 ms to whichever node the "load balancer" (the test)
// picks, reconnecting and re-sending what was not acknowledged when their node goes away. Each node in turn is
// stopped (SIGTERM) and started again. Every acknowledged message is then answered exactly once, and none is doubled.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { spawnParley, tempDir, type ParleyProcess } from '../support/parley.ts';
import { createMigratedTestDatabase } from '../support/shared-postgres.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CUSTOMERS = 12;

describe('a rolling restart of every node under load', () => {
  it('every acknowledged message is answered exactly once', async () => {
    const db = await createMigratedTestDatabase();
    const llm = await startFakeOpenAi();
    cleanups.push(() => llm.close());
    llm.fallback((body: { messages: { role: string; content: unknown }[] }) => {
      const last = [...body.messages].reverse().find((m) => m.role === 'user');
      return { text: `re: ${String(last?.content)}`, delayMs: 30 };
    });
    const start = async (nodeId: string) => {
      const p = await spawnParley({
        storagePath: tempDir(),
        config: {
          storage: { engine: 'postgres', url: db },
          cluster: { node_id: nodeId, lease_seconds: 1 },
          llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', max_retries: 0 },
          channels: { web: { rate_limit_per_minute: 100_000 } },
        },
      });
      cleanups.push(() => p.kill('SIGKILL'));
      started.push({ nodeId, p });
      return p;
    };
    /** Every process this test started, the stopped ones too: their logs explain a failure. */
    const started: { nodeId: string; p: ParleyProcess }[] = [];
    const nodes: ParleyProcess[] = [await start('node-a'), await start('node-b')];
    let picks = 0;
    /** The load balancer: round robin over the nodes up now. */
    const pick = () => nodes[picks++ % nodes.length].url;

    let loadEnds = Number.POSITIVE_INFINITY;
    const acked = new Map<string, Set<string>>();
    const customer = async (c: number) => {
      const customerId = `roll-${c}`;
      const mine = new Set<string>();
      acked.set(customerId, mine);
      const unacked: string[] = [];
      let seq = 0;
      while (Date.now() < loadEnds || unacked.length) {
        let w: WidgetClient;
        try {
          w = await connectWidget(pick());
          w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
          await w.next((f) => f.type === 'ready', 5000);
        } catch {
          await sleep(100);
          continue;
        }
        try {
          for (;;) {
            const id = unacked[0] ?? `m${seq++}`;
            if (!unacked.length) {
              if (Date.now() >= loadEnds) break;
              unacked.push(id);
            }
            w.send({ type: 'message', id, text: `${customerId} ${id}` });
            await w
              .next((f) => (f.type === 'ack' && f.id === id) || f.type === 'error', 5000)
              .then((f) => {
                if (f.type !== 'ack') throw new Error(`not acknowledged: ${JSON.stringify(f)}`);
              });
            unacked.shift();
            mine.add(id);
            await sleep(150);
          }
          w.close();
        } catch {
          w.close();
          await sleep(100);
        }
      }
    };
    const load = Promise.all(Array.from({ length: CUSTOMERS }, (_, c) => customer(c)));

    // Each node in turn: stopped cleanly under load, then started again under the same id.
    await sleep(1500);
    for (const [i, nodeId] of ['node-a', 'node-b'].entries()) {
      const old = nodes[i];
      nodes.splice(i, 1);
      await old.kill('SIGTERM');
      nodes.splice(i, 0, await start(nodeId));
      await sleep(1500);
    }
    loadEnds = Date.now() + 500;
    await load;

    // Every acknowledged message answered exactly once, nothing doubled.
    const total = [...acked.values()].reduce((n, s) => n + s.size, 0);
    expect(total).toBeGreaterThan(CUSTOMERS * 10);
    try {
      const deadline = Date.now() + 30_000;
      for (const [customerId, ids] of acked) {
        let history: string[];
        for (;;) {
          const w = await connectWidget(nodes[0].url);
          w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
          const ready = await w.next((f) => f.type === 'ready');
          w.close();
          history = ready.history.map((h: { role: string; text: string }) => `${h.role}:${h.text}`);
          const replies = history.filter((h) => h.startsWith('assistant:')).length;
          if (replies >= ids.size || Date.now() > deadline) break;
          await sleep(300);
        }
        for (const id of ids) {
          expect(
            history.filter((h) => h === `user:${customerId} ${id}`),
            `${customerId} ${id} stored once`,
          ).toHaveLength(1);
          expect(
            history.filter((h) => h === `assistant:re: ${customerId} ${id}`),
            `${customerId} ${id} answered once`,
          ).toHaveLength(1);
        }
        expect(new Set(history).size, `${customerId}: nothing doubled`).toBe(history.length);
      }
    } catch (err) {
      // Rare under load: the failure carries every node's warnings and errors, for the diagnosis.
      const lines = started.flatMap(({ nodeId, p }) =>
        p
          .output()
          .split('\n')
          .filter((l) => /"level":(40|50|60)/.test(l))
          .map((l) => `${nodeId} pid ${p.child.pid}: ${l.slice(0, 400)}`),
      );
      throw Object.assign(err as Error, { message: `${(err as Error).message}\nnode warnings and errors (last 80):\n${lines.slice(-80).join('\n')}` });
    }
  }, 120_000);
});
