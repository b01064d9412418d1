// Issue 15 part 1, the store's own size limit: lmdb-js grows LMDB's map on demand, so `storage.map_size_mb` is
// enforced by Parley. A small limit fills up under traffic: webhooks get 503 (never 500), /ready names
// `write_failing: map_full`; restarted with a larger limit, every acknowledged message is answered exactly once.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeGraph } from '../support/fake-graph.ts';
import { spawnParley, tempDir } from '../support/parley.ts';
import { postWebhook, sleep, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const answeredWamid = (callbackData: string | undefined) => /:wa:(.+):r$/.exec(callbackData ?? '')?.[1];

describe('the store size limit (storage.map_size_mb)', () => {
  it('a small limit: 503 with write_failing: map_full, no 500, no crash; a larger limit after a restart answers everything acknowledged once', async () => {
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const storagePath = tempDir();
    const config = (mapSizeMb: number) => ({
      storage: { map_size_mb: mapSizeMb, disk_reserve_mb: 1 },
      channels: { whatsapp: { enabled: true, provider: 'meta' as const, graph_url: graph.url, ...WA } },
    });
    const first = await spawnParley({ storagePath, config: config(3) });
    cleanups.push(() => first.kill());
    graph.sendStatusesTo(`${first.url}/wa/webhook`, WA.app_secret);

    const acked = new Set<string>();
    const statuses = new Map<number, number>();
    let ready: { status: number; body: any } | undefined;
    const deadline = Date.now() + 60_000;
    for (let round = 0; (statuses.get(503) ?? 0) < 5; round++) {
      expect(Date.now(), `the limit was never reached: ${JSON.stringify([...statuses])}`).toBeLessThan(deadline);
      const msgs = Array.from({ length: 5 }, (_, k) =>
        textMessage(`+1555400${String(k).padStart(4, '0')}`, `hello ${'y'.repeat(2000)}`, `wamid.mf.${k}.${round}`),
      );
      const res = await postWebhook(first.url, webhookBody(msgs));
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) for (const m of msgs) acked.add(m.id);
      else {
        expect(res.status).toBe(503);
        expect((await res.json()).error.code).toBe('unavailable');
        const r = await fetch(`${first.url}/ready`);
        ready ??= { status: r.status, body: await r.json() };
      }
    }
    expect(acked.size).toBeGreaterThan(0);
    expect(ready?.status).toBe(503);
    expect(ready?.body.checks.database).toBe('write_failing: map_full');
    await sleep(500);
    expect(first.child.exitCode, 'still running').toBeNull();
    expect(first.output()).not.toMatch(/unhandled rejection|"msg":"request failed"/);

    // The operator raises the limit and restarts.
    expect(await first.kill('SIGTERM')).toBe(0);
    const second = await spawnParley({ storagePath, config: config(64), port: Number(new URL(first.url).port) });
    cleanups.push(() => second.kill());
    const end = Date.now() + 30_000;
    for (;;) {
      const answered = new Set(graph.delivered().map((r) => answeredWamid(r.body?.biz_opaque_callback_data)));
      if ([...acked].every((id) => answered.has(id))) break;
      expect(Date.now(), `unanswered after the restart: ${[...acked].filter((id) => !answered.has(id)).length}`).toBeLessThan(end);
      await sleep(200);
    }
    await sleep(500);
    const perWamid = new Map<string, number>();
    for (const r of graph.delivered()) {
      const id = answeredWamid(r.body.biz_opaque_callback_data);
      if (id) perWamid.set(id, (perWamid.get(id) ?? 0) + 1);
    }
    expect([...acked].filter((id) => perWamid.get(id) !== 1)).toEqual([]);
    expect((await fetch(`${second.url}/ready`)).status).toBe(200);
  }, 120_000);
});
