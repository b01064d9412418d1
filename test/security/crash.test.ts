// Issue 8 part 1: crash recovery. A real process is SIGKILLed during a burst
// of 500 widget messages and 500 signed WhatsApp messages, at a random point
// (seeded; the seed is printed), then restarted on the same data directory.
// Every acknowledged message gets exactly one reply, no WhatsApp message is
// delivered twice, conversations restore idle, proactive keys and caps hold.
// CRASH_SEED=<n> replays a run; CRASH_RUNS=<n> changes the number of runs (default 5).
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/lmdb.ts';
import { startFakeGraph, type FakeGraph } from '../support/fake-graph.ts';
import { spawnParley, TEST_SECRET, tempDir, type ParleyProcess } from '../support/parley.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';
import { postWebhook, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const RUNS = Number(process.env.CRASH_RUNS ?? 5);
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CUSTOMERS = 50;
const PER_CUSTOMER = 10;

function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const phone = (i: number) => `+1555200${String(i).padStart(4, '0')}`;
const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };

async function proactive(url: string, body: Record<string, unknown>) {
  return (await fetch(`${url}/proactive`, { method: 'POST', headers: auth, body: JSON.stringify(body) })).json();
}

async function oneRun(run: number, seed: number, graph: FakeGraph) {
  const random = prng(seed);
  const killAfter = 100 + Math.floor(random() * 800); // acknowledgements before the kill
  const storagePath = tempDir();
  const config = {
    identity: { allow_anonymous: true },
    proactive: { enabled: true, daily_cap: 3 },
    channels: { web: { rate_limit_per_minute: 100_000 }, whatsapp: { enabled: true, provider: 'meta' as const, graph_url: graph.url, uncertain_grace_ms: 5000, ...WA } },
  };
  const first: ParleyProcess = await spawnParley({ storagePath, config});
  const port = Number(new URL(first.url).port);
  // Meta's status webhooks reach whichever process listens on the port (the restarted one after the kill).
  graph.sendStatusesTo(`${first.url}/wa/webhook`, WA.app_secret);
  cleanups.push(() => first.kill());

  // Proactive state before the burst: one key sent, the cap reached.
  const ws: WidgetClient[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const w = await connectWidget(first.url);
    w.send({ type: 'init', customerId: `w${i}`, email: `w${i}@example.com` });
    ws.push(w);
  }
  await Promise.all(ws.map((w) => w.next((f) => f.type === 'ready')));
  await fetch(`${first.url}/proactive/opt-in`, { method: 'POST', headers: auth, body: JSON.stringify({ customerExternalId: 'w0', optIn: true }) });
  expect((await proactive(first.url, { customerExternalId: 'w0', channel: 'web', content: 'a', dedupKey: 'crash-key' })).accepted).toBe(true);
  expect((await proactive(first.url, { customerExternalId: 'w0', channel: 'web', content: 'b' })).accepted).toBe(true);
  expect((await proactive(first.url, { customerExternalId: 'w0', channel: 'web', content: 'c' })).accepted).toBe(true);

  let acks = 0;
  let killed = false;
  const ackedWidget = new Set<string>();
  const ackedWa = new Set<string>();
  let resolveKill!: () => void;
  const killNow = new Promise<void>((r) => (resolveKill = r));
  const acked = () => {
    if (++acks >= killAfter && !killed) {
      killed = true;
      resolveKill();
    }
  };
  for (const w of ws) {
    w.socket.on('message', (d) => {
      const f = JSON.parse(d.toString());
      if (f.type === 'ack') {
        ackedWidget.add(f.id);
        acked();
      }
    });
  }
  const widgetBurst = (async () => {
    for (let k = 0; k < PER_CUSTOMER && !killed; k++) {
      ws.forEach((w, i) => {
        if (w.socket.readyState === w.socket.OPEN) w.send({ type: 'message', id: `w${i}-m${k}`, text: `hello ${k}` });
      });
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const waBurst = (async () => {
    for (let k = 0; k < PER_CUSTOMER && !killed; k++) {
      await Promise.all(
        Array.from({ length: CUSTOMERS / 5 }, async (_, b) => {
          const msgs = Array.from({ length: 5 }, (_, j) => textMessage(phone(b * 5 + j), `hi ${k}`, `wamid.c${run}.${b * 5 + j}.${k}`));
          try {
            const res = await postWebhook(first.url, webhookBody(msgs));
            if (res.status === 200) {
              for (const m of msgs) ackedWa.add(m.id);
              for (let j = 0; j < msgs.length; j++) acked();
            }
          } catch {
            /* the process died mid-request: not acknowledged */
          }
        }),
      );
    }
  })();
  await Promise.race([killNow, Promise.all([widgetBurst, waBurst])]);
  await first.kill('SIGKILL');
  const killedAt = Date.now();
  killed = true;
  await Promise.allSettled([widgetBurst, waBurst]);
  for (const w of ws) w.close();
  const ackedBeforeKill = { widget: ackedWidget.size, whatsapp: ackedWa.size };

  // Restart on the same data directory and let it finish.
  const second = await spawnParley({ storagePath, config, port});
  cleanups.push(() => second.kill());
  const end = Date.now() + 60_000;
  for (;;) {
    const d = await (await fetch(`${second.url}/diagnostics`)).json();
    const busy = d.conversations.list.filter((c: { state: string; queued: number }) => c.state !== 'idle' || c.queued > 0).length;
    if (d.whatsapp.inbound.depth === 0 && d.whatsapp.outbound.depth === 0 && busy === 0) break;
    if (Date.now() > end) throw new Error(`seed ${seed}: not settled after restart: ${JSON.stringify(d.whatsapp)} busy=${busy}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Proactive state survived: the key is still a duplicate, the cap still reached.
  expect(await proactive(second.url, { customerExternalId: 'w0', channel: 'web', content: 'a', dedupKey: 'crash-key' })).toEqual({ accepted: false, reason: 'Duplicate (dedupKey already sent)' });
  expect(await proactive(second.url, { customerExternalId: 'w0', channel: 'web', content: 'd' })).toEqual({ accepted: false, reason: 'Daily proactive limit reached' });
  expect(await second.kill('SIGTERM')).toBe(0);

  // Read the data directory directly.
  const store = await openStore({ path: storagePath });
  try {
    const records = [...store.table<{ id: string; conversationId: string; role: string; turnId?: string }>('messages').range({ start: ['m'], end: ['m', '\uffff'] })].map((r) => r.value);
    const byId = new Map<string, number>();
    for (const r of records) byId.set(`${r.conversationId}|${r.id}`, (byId.get(`${r.conversationId}|${r.id}`) ?? 0) + 1);
    const dupes = [...byId.entries()].filter(([, n]) => n > 1);
    expect(dupes, `seed ${seed}: duplicated records`).toEqual([]);
    const userMsgs = records.filter((r) => r.role === 'user');
    const replies = new Set(records.filter((r) => r.role === 'assistant').map((r) => r.id));
    const unanswered = userMsgs.filter((u) => !replies.has(`${u.conversationId}:${u.id}:r`));
    expect(unanswered, `seed ${seed}: stored messages without a reply`).toEqual([]);
    const storedWidget = new Set(userMsgs.filter((u) => u.conversationId.startsWith('conv_web_')).map((u) => u.id));
    const lostWidget = [...ackedWidget].filter((id) => !storedWidget.has(id));
    expect(lostWidget, `seed ${seed}: acknowledged widget messages lost`).toEqual([]);
    const storedWa = new Set(userMsgs.filter((u) => u.conversationId.startsWith('conv_whatsapp_')).map((u) => u.id.replace(/^wa:/, '')));
    const lostWa = [...ackedWa].filter((id) => !storedWa.has(id));
    expect(lostWa, `seed ${seed}: acknowledged WhatsApp messages lost`).toEqual([]);
    // Every WhatsApp reply went out exactly once.
    const waReplyRecords = records.filter((r) => r.role === 'assistant' && r.conversationId.startsWith('conv_whatsapp_'));
    const waReplies = waReplyRecords.length;
    if (graph.delivered().length !== waReplies) {
      const sentTable = store.table<unknown>('sent');
      const missing = waReplyRecords.filter((r) => !sentTable.get(`out:${r.id}`)).map((r) => r.id); // replies never sent
      const jobs = [...store.table<unknown>('jobs').range()].map((r) => [r.key, r.value]);
      const attemptsLeft = [...store.table<unknown>('sendAttempts').range()].map((r) => r.key);
      const counts = new Map<string, number[]>();
      for (const r of graph.delivered()) counts.set(r.body.biz_opaque_callback_data, [...(counts.get(r.body.biz_opaque_callback_data) ?? []), r.at]);
      const dup = [...counts.entries()].filter(([, v]) => v.length > 1).map(([k, v]) => [k, v.map((t) => t - killedAt)]);
      console.log(JSON.stringify({ missing, dup, jobs: jobs.slice(0, 6), attemptsLeft }));
    }
    expect(graph.delivered().length, `seed ${seed}: WhatsApp deliveries vs replies`).toBe(waReplies);
    const convs = [...store.table<{ busy: boolean; state: string }>('conversations').range()].map((r) => r.value);
    expect(convs.filter((c) => c.busy || c.state !== 'idle'), `seed ${seed}: conversations not idle`).toEqual([]);
    return { killAfter, ackedBeforeKill, stored: userMsgs.length, replies: replies.size, delivered: graph.delivered().length };
  } finally {
    await store.close();
  }
}

describe('crash recovery under a burst', () => {
  it(`SIGKILL at ${RUNS} random points (seed ${SEED}): every acknowledged message answered exactly once`, async () => {
    console.log(`crash recovery seed: ${SEED} (replay with CRASH_SEED=${SEED})`);
    const seeds = Array.from({ length: RUNS }, (_, i) => (SEED + i * 7919) >>> 0);
    for (const [run, seed] of seeds.entries()) {
      const graph = await startFakeGraph();
      cleanups.push(() => graph.close());
      const result = await oneRun(run, seed, graph);
      console.log(`run ${run + 1}/${RUNS} seed ${seed}: killed after ${result.killAfter} acks; acked widget ${result.ackedBeforeKill.widget}, whatsapp ${result.ackedBeforeKill.whatsapp}; stored ${result.stored}, replies ${result.replies}, WhatsApp delivered ${result.delivered}`);
    }
  }, 300_000);
});
