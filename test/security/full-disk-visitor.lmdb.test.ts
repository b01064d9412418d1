// Issue 34 part 7, black-box, on a really full filesystem (a tmpfs the test mounts, as root, as CI runs): a new
// visitor's `init` needs a customer record written; while the disk is full it is answered `unavailable` (the
// environment, try again), not `internal` (a bug), and the log holds no stack for it. Once space is back, the same
// visitor starts.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { spawnParley, TEST_SECRET } from '../support/parley.ts';
import { fillUp, isRoot, mountTmpfs } from '../support/tmpfs.ts';
import { connectWidget, startWidgetSession } from '../support/widget-client.ts';
import { sleep } from '../support/whatsapp.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A new visitor's init: the first `ready` or `error` frame it gets. */
async function initVisitor(url: string, id: string): Promise<Record<string, any>> {
  const w = await connectWidget(url);
  try {
    w.send({ type: 'init', customerId: id, email: `${id}@example.com` });
    return await w.next((f) => f.type === 'ready' || f.type === 'error', 20_000);
  } finally {
    w.close();
  }
}

describe('a new visitor on a full disk', () => {
  it('init is answered unavailable (not internal) without a stack in the log; after space returns the visitor starts', async () => {
    expect(isRoot, 'this test mounts a tmpfs: run the suite as root (CI does)').toBe(true);
    const dir = mountTmpfs(48, (fn) => cleanups.push(fn));
    const storagePath = join(dir, 'data');
    mkdirSync(storagePath);
    const parley = await spawnParley({
      storagePath,
      config: { storage: { disk_reserve_mb: 1 }, channels: { web: { rate_limit_per_minute: 100_000 }, whatsapp: { enabled: true, provider: 'sdk' } } },
    });
    cleanups.push(() => parley.kill());
    const writers = await Promise.all([0, 1, 2, 3].map((i) => startWidgetSession(parley.url, { customerId: `writer-${i}`, email: `writer-${i}@example.com` })));
    for (const w of writers) cleanups.push(() => w.close());

    fillUp(join(dir, 'ballast'), 256);
    // The store's reserve outlasts the disk by a little: messages use it up until the store refuses writes.
    const deadline = Date.now() + 90_000;
    for (let round = 0; ; round++) {
      expect(Date.now(), 'the store never refused a write on the full disk').toBeLessThan(deadline);
      const answers = await Promise.all(
        writers.map((w, i) => {
          w.send({ type: 'message', id: `r${round}-${i}`, text: `${round} ${'x'.repeat(3900)}` });
          return w.next((f) => (f.type === 'ack' && f.id === `r${round}-${i}`) || f.type === 'error', 20_000);
        }),
      );
      if (answers.some((a) => a.type === 'error')) {
        for (const a of answers) if (a.type === 'error') expect(a.code).toBe('unavailable');
        break;
      }
    }
    // A new customer's record can still fit in a page LMDB freed earlier, or in what is left of the store's reserve
    // (how much depends on where the writers' last commit failed): new visitors until one cannot be stored.
    let refused: Record<string, any> = {};
    for (let i = 0; i < 1000; i++) {
      refused = await initVisitor(parley.url, `new-visitor-${i}`);
      if (refused.type !== 'ready') break;
    }
    // A WhatsApp message the SDK ingests (provider sdk): a negative ack saying unavailable, not "ingest failed".
    const sdk = new WebSocket(`${parley.url.replace('http', 'ws')}/sdk`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    cleanups.push(() => sdk.close());
    const acks = new Map<string, (f: Record<string, any>) => void>();
    sdk.on('message', (d) => {
      const f = JSON.parse(d.toString());
      if (f.type === 'ack') acks.get(f.id)?.(f);
    });
    await new Promise((resolve, reject) => sdk.once('open', resolve).once('error', reject));
    // A small job can still fit in a page LMDB freed earlier: ingest until one cannot be stored (each accepted one is
    // stored, which is right), then that one must be refused as unavailable.
    let sdkAck: Record<string, any> = {};
    for (let i = 0; i < 40; i++) {
      const acked = new Promise<Record<string, any>>((resolve) => acks.set(`full-ingest-${i}`, resolve));
      sdk.send(JSON.stringify({ type: 'ingest', id: `full-ingest-${i}`, channel: 'whatsapp', from: '+15550009999', text: `hello ${'y'.repeat(3000)}` }));
      sdkAck = await acked;
      if (!sdkAck.ok) break;
    }
    expect(sdkAck).toMatchObject({ ok: false, error: expect.stringMatching(/^unavailable: Parley cannot store this now \((ENOSPC|EIO)\)/) }); // a full tmpfs: EIO when a page spill meets it
    // An init being handled is bounded by the store's deadline, not the 10 s wait for a first init: `unavailable`.
    expect(refused).toMatchObject({ type: 'error', code: 'unavailable' });
    // Both refusals are logged at warn, with the cause and no stack (the child's output may lag its frames).
    const logged = Date.now() + 10_000;
    while (!/ingest not stored: the store cannot write/.test(parley.output())) {
      expect(Date.now(), 'the ingest refusal was never logged').toBeLessThan(logged);
      await sleep(50);
    }
    const out = parley.output();
    expect(out).toMatch(/"level":40[^\n]*"code":"(ENOSPC|EIO)"[^\n]*widget frame not handled: the store cannot write/);
    expect(out).toMatch(/"level":40[^\n]*"code":"(ENOSPC|EIO)"[^\n]*ingest not stored: the store cannot write/);
    // A commit LMDB reports as "Commit failed" (its cause, e.g. EIO, on `commitError`) is the store being
    // unavailable: no error-level line, no stack, no unhandled rejection.
    expect(out.split('\n').filter((l) => /"level":50/.test(l))).toEqual([]);

    rmSync(join(dir, 'ballast'));
    const settled = Date.now() + 60_000;
    for (;;) {
      const answer = await initVisitor(parley.url, 'after-space');
      if (answer.type === 'ready') break;
      expect(answer).toMatchObject({ code: 'unavailable' });
      expect(Date.now(), 'the visitor never started after space returned').toBeLessThan(settled);
      await sleep(250);
    }
    expect(parley.child.exitCode, 'the process is alive').toBeNull();
  }, 150_000);
});
