// Issue 15 part 1, black-box, on a really full filesystem: the data directory is a small tmpfs (mounted by the
// test, which needs root, as CI has) that fills up while widget messages and signed webhooks are in flight.
// While writes fail: webhooks get 503 with an error body (never 500, never a hang), widget messages an
// `unavailable` frame and no ack, /ready names the failure. Once space is freed, with no restart: /ready is ok
// again, and every acknowledged message is answered exactly once. No unhandled rejection, and the process lives.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeGraph } from '../support/fake-graph.ts';
import { spawnParley, tempDir } from '../support/parley.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';
import { postWebhook, sleep, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

export const isRoot = process.getuid?.() === 0;

export function mountTmpfs(sizeMb: number): string {
  const dir = tempDir('parley-tmpfs-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  cleanups.push(() => {
    try {
      execFileSync('umount', ['-l', dir]);
    } catch {
      /* already gone */
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the filesystem with one file until a write fails, then gives back `leaveKb`. */
export function fillUp(path: string, leaveKb: number) {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    /* full */
  }
  closeSync(fd);
  truncateSync(path, Math.max(0, statSync(path).size - leaveKb * 1024));
}

const phone = (k: number) => `+1555300${String(k).padStart(4, '0')}`;
const answeredWamid = (callbackData: string | undefined) => /:wa:(.+):r$/.exec(callbackData ?? '')?.[1];

// Not skipped silently: without root (no mount) the test fails and says so; CI runs as root.
describe('a full disk (a real tmpfs that fills up)', () => {
  it('503s and unavailable frames while full; after space returns, every acknowledged message is answered exactly once, without a restart', async () => {
    expect(isRoot, 'this test mounts a tmpfs: run the suite as root (CI does)').toBe(true);
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const dir = mountTmpfs(48);
    const storagePath = join(dir, 'data');
    mkdirSync(storagePath);
    const parley = await spawnParley({
      storagePath,
      config: {
        storage: { disk_reserve_mb: 4 },
        channels: { web: { rate_limit_per_minute: 100_000 }, whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA } },
      },
    });
    cleanups.push(() => parley.kill());
    graph.sendStatusesTo(`${parley.url}/wa/webhook`, WA.app_secret);
    // Everything but ~1 MB goes to a ballast file: the store has its 4 MB reserve and then nothing.
    const ballast = join(dir, 'ballast');
    fillUp(ballast, 1024);

    const widgets: WidgetClient[] = [];
    const ackedWidget = new Set<string>();
    const repliesLive = new Map<string, number>();
    const unavailableFrames: string[] = [];
    for (let i = 0; i < 8; i++) {
      const w = await connectWidget(parley.url);
      cleanups.push(() => w.close());
      w.send({ type: 'init', customerId: `fd${i}`, email: `fd${i}@example.com` });
      await w.next((f) => f.type === 'ready');
      w.socket.on('message', (d) => {
        const f = JSON.parse(d.toString());
        if (f.type === 'ack') ackedWidget.add(`conv_web_fd${i}:${f.id}`);
        if (f.type === 'error') unavailableFrames.push(f.code);
        if (f.type === 'message' && f.role === 'assistant') repliesLive.set(f.id, (repliesLive.get(f.id) ?? 0) + 1);
      });
      widgets.push(w);
    }

    const statuses = new Map<number, number>();
    const ackedWa = new Set<string>();
    let readyWhileFull: { status: number; body: any } | undefined;
    let round = 0;
    const deadline = Date.now() + 60_000;
    // Until the disk has been refusing writes for a while (and at least 40 rounds).
    while ((statuses.get(503) ?? 0) < 15 || round < 40) {
      expect(Date.now(), `the disk never filled: ${JSON.stringify([...statuses])}`).toBeLessThan(deadline);
      widgets.forEach((w, i) => w.send({ type: 'message', id: `m${round}`, text: `what is the status of order ${1000 + round}? (customer ${i})` }));
      const msgs = Array.from({ length: 4 }, (_, k) => textMessage(phone(k), `hello ${round} ${'x'.repeat(200)}`, `wamid.fd.${k}.${round}`));
      const started = Date.now();
      const res = await postWebhook(parley.url, webhookBody(msgs));
      expect(Date.now() - started, 'a webhook answered within 10 s').toBeLessThan(10_500);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) for (const m of msgs) ackedWa.add(m.id);
      else {
        expect(res.status).toBe(503);
        expect((await res.json()).error).toMatchObject({ code: 'unavailable' });
        if (!readyWhileFull) {
          const r = await fetch(`${parley.url}/ready`);
          readyWhileFull = { status: r.status, body: await r.json() };
        }
      }
      round++;
      await sleep(30);
    }
    expect(statuses.get(200), 'some webhooks were acknowledged before the disk filled').toBeGreaterThan(0);
    expect(readyWhileFull?.status).toBe(503);
    expect(readyWhileFull?.body.checks.database).toMatch(/^write_failing: ENOSPC/);
    expect(unavailableFrames, 'widget messages refused while full').toContain('unavailable');

    rmSync(ballast);
    // Ready again by itself, and everything acknowledged answered: WhatsApp through the fake Graph API.
    const settled = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`${parley.url}/ready`);
      const answered = new Set(graph.delivered().map((r) => answeredWamid(r.body?.biz_opaque_callback_data)));
      const missing = [...ackedWa].filter((id) => !answered.has(id));
      if (ready.status === 200 && missing.length === 0) break;
      expect(Date.now(), `not settled: ready ${ready.status} ${await ready.text()}; ${missing.length} unanswered`).toBeLessThan(settled);
      await sleep(250);
    }
    await sleep(1000); // a late duplicate would show now
    const perCallback = new Map<string, number>();
    for (const r of graph.delivered()) perCallback.set(r.body.biz_opaque_callback_data, (perCallback.get(r.body.biz_opaque_callback_data) ?? 0) + 1);
    expect(
      [...perCallback].filter(([, n]) => n > 1),
      'a WhatsApp reply delivered twice',
    ).toEqual([]);
    const perWamid = new Map<string, number>();
    for (const r of graph.delivered()) {
      const id = answeredWamid(r.body.biz_opaque_callback_data);
      if (id) perWamid.set(id, (perWamid.get(id) ?? 0) + 1);
    }
    expect([...ackedWa].filter((id) => perWamid.get(id) !== 1)).toEqual([]);

    // Widget: every acknowledged message got exactly one reply on its (still open) socket.
    const settledWidget = Date.now() + 30_000;
    while ([...ackedWidget].some((id) => !repliesLive.has(`${id}:r`)) && Date.now() < settledWidget) await sleep(250);
    expect(
      [...ackedWidget].filter((id) => repliesLive.get(`${id}:r`) !== 1),
      'acknowledged widget messages not answered exactly once',
    ).toEqual([]);
    expect(
      [...repliesLive].filter(([, n]) => n > 1),
      'a widget reply sent twice',
    ).toEqual([]);
    expect(parley.child.exitCode, 'the process is alive').toBeNull();
    const out = parley.output();
    expect(out).not.toMatch(/unhandled rejection/);
    expect(out).not.toMatch(/"level":50[^\n]*"msg":"request failed"/);
  }, 150_000);
});
