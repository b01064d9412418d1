// WhatsApp only: 120 signed messages acknowledged, the process SIGKILLed while
// their replies are going out (some Graph requests in flight), restarted on the
// same data and port. Every acknowledged message is answered exactly once,
// matched per reply through biz_opaque_callback_data and the messages each stored
// reply answers (a burst is answered by one reply); the fake Graph sends
// Meta's status webhooks (held back until after the restart), which resolve
// the sends the kill interrupted instead of a resend.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeGraph } from '../support/fake-graph.ts';
import { spawnParley, tempDir } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { openRunStore } from '../support/test-engine.ts';
import { postWebhook, sleep, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const PHONES = 30;
/**
 * A send the kill interrupted waits this long (from its start, before the kill) for Meta's status before it is sent
 * again. The statuses come once the second process is up; with 15 s a busy machine's restart outlasted the grace and
 * 14 replies went out twice, as the product promises when no status comes in time (README, WhatsApp).
 */
const GRACE_MS = 60_000;

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
    const config = { channels: { whatsapp: { enabled: true, provider: 'meta' as const, graph_url: graph.url, uncertain_grace_ms: GRACE_MS, ...WA } } };
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
    // A burst (the messages a phone sent while its turn ran, or within the gathering window) is answered by one
    // reply, delivered under its first message's id: settled when nothing is queued or busy and deliveries stop.
    const end = Date.now() + GRACE_MS + 90_000;
    let lastDelivered = -1;
    let quietSince = Date.now();
    for (;;) {
      const d = await (await fetch(`${second.url}/diagnostics`)).json();
      const busy = d.conversations.list.filter((c: { state: string; queued: number }) => c.state !== 'idle' || c.queued > 0).length;
      const quiet = d.whatsapp.inbound.depth === 0 && d.whatsapp.outbound.depth === 0 && busy === 0;
      const delivered = graph.delivered().length;
      if (quiet && delivered === lastDelivered && Date.now() - quietSince >= 1_000) break;
      if (!quiet || delivered !== lastDelivered) quietSince = Date.now();
      lastDelivered = delivered;
      if (Date.now() > end) throw new Error(`not settled: ${JSON.stringify(d.whatsapp)}; busy ${busy}`);
      await sleep(100);
    }
    expect(await second.kill('SIGTERM')).toBe(0);

    // Which messages each reply answers: stored with the reply (`answers`, for a burst), else its own message.
    const store = await openRunStore(storagePath);
    const answersOf = new Map<string, string[]>();
    try {
      for (const c of await store.conversations.summaries({ limit: 10_000 }))
        for (const r of await historyOf(store, c.conversationId))
          if (r.role === 'assistant')
            answersOf.set(r.id, Array.isArray(r.data?.answers) ? (r.data.answers as string[]) : [r.id.replace(/^.*:wa:(.+):r$/, 'wa:$1')]);
    } finally {
      await store.close();
    }
    const perId = new Map<string, number>();
    const perCallback = new Map<string, number>();
    for (const r of graph.delivered()) {
      const callback = r.body.biz_opaque_callback_data as string;
      expect(answeredId(callback), `a delivered message without a recognisable callback: ${JSON.stringify(r.body)}`).toBeDefined();
      perCallback.set(callback, (perCallback.get(callback) ?? 0) + 1);
      for (const m of answersOf.get(callback.replace(/^out:/, '')) ?? []) perId.set(m.replace(/^wa:/, ''), (perId.get(m.replace(/^wa:/, '')) ?? 0) + 1);
    }
    expect(
      [...perCallback].filter(([, n]) => n > 1),
      'delivered twice',
    ).toEqual([]);
    for (const id of acked) expect(perId.get(id), `answers to ${id}`).toBe(1);
    expect([...perId.entries()].filter(([, n]) => n > 1)).toEqual([]);
  }, 240_000); // GRACE_MS and three minutes
});
