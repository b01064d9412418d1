// WhatsApp only: 120 signed messages acknowledged, the process SIGKILLed while
// their replies are going out (some Graph requests in flight), restarted on the
// same data and port. Every acknowledged message is answered exactly once,
// matched per message id through biz_opaque_callback_data; the fake Graph sends
// Meta's status webhooks (held back until after the restart), which resolve
// the sends the kill interrupted instead of a resend.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeGraph } from '../support/fake-graph.ts';
import { spawnParley, tempDir } from '../support/parley.ts';
import { postWebhook, sleep, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const PHONES = 30;
const PER_PHONE = 4;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const phone = (i: number) => `+1555300${String(i).padStart(4, '0')}`;
/** out:conv_whatsapp_<customer>:wa:<wamid>:r → wamid */
const answeredId = (callbackData: string | undefined) => /:wa:(.+):r$/.exec(callbackData ?? '')?.[1];

describe('WhatsApp crash recovery', () => {
  it('SIGKILL with acknowledged messages queued and sends in flight → after restart each is answered exactly once', async () => {
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const storagePath = tempDir();
    const config = { channels: { whatsapp: { enabled: true, provider: 'meta' as const, graph_url: graph.url, uncertain_grace_ms: 15_000, ...WA } } };
    const first = await spawnParley({ storagePath, config });
    cleanups.push(() => first.kill());
    const port = Number(new URL(first.url).port);
    graph.sendStatusesTo(`${first.url}/wa/webhook`, WA.app_secret);
    // Meta's statuses come late: only the restarted process sees them, so they must resolve the interrupted sends.
    graph.holdStatuses(true);
    // The first sends answer slowly (accepted at once, status sent): the kill finds some in flight.
    graph.failNext(...Array.from({ length: 40 }, () => ({ slowMs: 400 })));

    const acked: string[] = [];
    const messages = Array.from({ length: PER_PHONE }, (_, k) =>
      Array.from({ length: PHONES }, (_, i) => textMessage(phone(i), `hello ${k}`, `wamid.crash.${i}.${k}`)),
    ).flat();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < messages.length) {
          const m = messages[next++];
          const res = await postWebhook(first.url, webhookBody([m]));
          if (res.status === 200 && (await res.json()).queued === 1) acked.push(m.id);
        }
      }),
    );
    expect(acked.length).toBeGreaterThanOrEqual(100);
    await first.kill('SIGKILL');
    const deliveredBeforeKill = graph.delivered().length;
    expect(deliveredBeforeKill, 'the kill should land while replies are still going out').toBeLessThan(acked.length);

    const second = await spawnParley({ storagePath, config, port });
    cleanups.push(() => second.kill());
    graph.holdStatuses(false);
    const end = Date.now() + 90_000;
    for (;;) {
      const d = await (await fetch(`${second.url}/diagnostics`)).json();
      const answered = new Set(graph.delivered().map((r) => answeredId(r.body.biz_opaque_callback_data)));
      if (d.whatsapp.inbound.depth === 0 && d.whatsapp.outbound.depth === 0 && acked.every((id) => answered.has(id))) break;
      if (Date.now() > end) throw new Error(`not settled: ${JSON.stringify(d.whatsapp)}; unanswered ${acked.filter((id) => !answered.has(id)).length}`);
      await sleep(100);
    }
    await sleep(500);

    const perId = new Map<string, number>();
    for (const r of graph.delivered()) {
      const id = answeredId(r.body.biz_opaque_callback_data);
      expect(id, `a delivered message without a recognisable callback: ${JSON.stringify(r.body)}`).toBeDefined();
      perId.set(id!, (perId.get(id!) ?? 0) + 1);
    }
    for (const id of acked) expect(perId.get(id), `answers to ${id}`).toBe(1);
    expect([...perId.entries()].filter(([, n]) => n > 1)).toEqual([]);
  }, 150_000);
});
