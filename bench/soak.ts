// Soak: steady mixed load for SOAK_MINUTES (default 10) against a real Parley
// process — widget turns with one SDK call each, signed WhatsApp webhooks,
// proactive sends, and an SDK that reconnects every 30 s. The server runs as
// a child process so the load generator does not share its event loop; every
// 10 s the soak reads the server's heap and RSS (/diagnostics) and its
// event-loop lag p99 (/metrics). After a warm-up (first 20%) it prints growth,
// lag and the errors the server logged. Heap is read after a forced GC.
// RSS is split as Linux reports it (/proc/<pid>/status): RssAnon is the
// process's own memory, where a leak would show; RssFile is mostly LMDB's
// memory-mapped data file, which grows with the data by design.
//   npx tsx bench/soak.ts                     (10 minutes)
//   SOAK_MINUTES=2 npx tsx bench/soak.ts
//   BENCH_ENGINE=postgres npx tsx bench/soak.ts   (the store on a PostgreSQL of the soak's own, fsync on; RssFile
//   then holds no data file, and the summary adds the database's size)
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { createClient } from '../sdk/src/index.ts';
import { startFakeGraph } from '../test/support/fake-graph.ts';
import { spawnParley, TEST_SECRET, tempDir } from '../test/support/parley.ts';
import { connectWidget, type WidgetClient } from '../test/support/widget-client.ts';
import pg from 'pg';
import { benchStorage, onEngine, startBenchPostgres } from './lib.ts';
import { postWebhook, textMessage, WA, webhookBody } from '../test/support/whatsapp.ts';

const minutes = Number(process.env.SOAK_MINUTES ?? 10);
// Each of the 50 widgets sends a message, waits for the answer, then pauses this long.
const PAUSE_MS = Number(process.env.SOAK_PAUSE_MS ?? 1000);
const durationMs = minutes * 60_000;
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

const graph = await startFakeGraph();
const postgres = await startBenchPostgres();
const storage = await benchStorage(postgres);
const server = await spawnParley({
  storagePath: tempDir('parley-soak-'),
  nodeArgs: ['--expose-gc'],
  config: {
    storage,
    proactive: { enabled: true, daily_cap: 1_000_000 },
    telemetry: { metrics_public: true },
    channels: { web: { rate_limit_per_minute: 100_000 }, whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA } },
  },
});
const p = { url: () => server.url };
graph.sendStatusesTo(`${p.url()}/wa/webhook`, WA.app_secret);

const expose = (c: ReturnType<typeof createClient>) =>
  c.expose(
    'getOrderStatus',
    { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
    async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }),
  );
let sdk = createClient();
expose(sdk);
await sdk.listen({ url: p.url(), secret: TEST_SECRET });

const WIDGETS = 50;
const widgets: WidgetClient[] = [];
for (let i = 0; i < WIDGETS; i++) {
  const w = await connectWidget(p.url());
  w.send({ type: 'init', customerId: `soak-${i}`, email: `soak-${i}@example.com` });
  await w.next((f) => f.type === 'ready');
  widgets.push(w);
}
await fetch(`${p.url()}/proactive/opt-in`, {
  method: 'POST',
  headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
  body: JSON.stringify({ customerExternalId: 'anon:soak-0', optIn: true }), // an anonymous visitor's externalId
});

const started = Date.now();
let turns = 0;
let webhooks = 0;
let proactives = 0;
let reconnects = 0;
let failures = 0;
let seq = 0;
let stopping = false;

const widgetLoop = async (w: WidgetClient, i: number) => {
  while (!stopping) {
    const id = `s${i}-${++seq}`;
    w.send({ type: 'message', id, text: `status of order ${1000 + (seq % 50)}` });
    try {
      await w.next((f) => f.type === 'message', 30_000);
      turns++;
    } catch {
      failures++;
    }
    await new Promise((r) => setTimeout(r, PAUSE_MS));
  }
};
const webhookLoop = async () => {
  while (!stopping) {
    const msgs = Array.from({ length: 5 }, (_, j) => textMessage(`+1555300${String((seq + j) % 200).padStart(4, '0')}`, 'hello', `wamid.soak.${++seq}`));
    const res = await postWebhook(p.url(), webhookBody(msgs)).catch(() => undefined);
    if (res?.status === 200) webhooks += 5;
    else failures++;
    await new Promise((r) => setTimeout(r, 100));
  }
};
const proactiveLoop = async () => {
  while (!stopping) {
    const res = await fetch(`${p.url()}/proactive`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customerExternalId: 'anon:soak-0', channel: 'web', content: 'update', dedupKey: `k${++seq % 500}` }),
    }).catch(() => undefined);
    if (res?.ok) proactives++;
    else failures++;
    await new Promise((r) => setTimeout(r, 100));
  }
};
const reconnectLoop = async () => {
  while (!stopping) {
    await new Promise((r) => setTimeout(r, 30_000));
    if (stopping) break;
    const next = createClient();
    expose(next);
    await next.listen({ url: p.url(), secret: TEST_SECRET });
    await sdk.close();
    sdk = next;
    reconnects++;
  }
};

/** RssAnon and RssFile of the server process, in bytes (Linux). */
const rssParts = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { anon: kb('RssAnon'), file: kb('RssFile') };
};

const samples: { t: number; heap: number; rss: number; rssAnon: number; rssFile: number; lagP99: number }[] = [];
const sample = async () => {
  // Parley runs in test mode here (for ?gc=1), where every WhatsApp send is also kept in the test outbox
  // (up to 10,000, for /__test__/whatsapp/outbox): the soak reads none of it, so it is emptied, or its
  // filling up over the first minutes would read as growth.
  await fetch(`${p.url()}/__test__/whatsapp/outbox`, { method: 'DELETE' });
  const d = await (await fetch(`${p.url()}/diagnostics?gc=1`)).json();
  const metrics = await (await fetch(`${p.url()}/metrics`)).text();
  const lagP99 = Number(/parley_event_loop_lag_seconds\{quantile="0.99"\} ([\d.e-]+)/.exec(metrics)?.[1] ?? NaN) * 1000;
  const { anon, file } = rssParts(server.child.pid!);
  const s = { t: Date.now() - started, heap: d.memory.heapUsed as number, rss: d.memory.rss as number, rssAnon: anon, rssFile: file, lagP99 };
  samples.push(s);
  log(
    `t=${Math.round(s.t / 1000)}s heap=${(s.heap / 2 ** 20).toFixed(1)}MB rss=${(s.rss / 2 ** 20).toFixed(1)}MB (anon ${(anon / 2 ** 20).toFixed(1)}MB, file ${(file / 2 ** 20).toFixed(1)}MB) lagP99=${s.lagP99.toFixed(1)}ms turns=${turns} webhooks=${webhooks} proactive=${proactives} reconnects=${reconnects} failures=${failures}`,
  );
};
const sampler = setInterval(() => void sample().catch((err) => log(`sample failed: ${err.message}`)), 10_000);

log(`soak${onEngine()}: ${minutes} min`);
const loops = [...widgets.map(widgetLoop), webhookLoop(), proactiveLoop(), reconnectLoop()];
await new Promise((r) => setTimeout(r, durationMs));
stopping = true;
clearInterval(sampler);
await Promise.race([Promise.allSettled(loops), new Promise((r) => setTimeout(r, 35_000))]);

const errorsLogged = server
  .output()
  .split('\n')
  .filter((l) => /"level":(50|60)/.test(l));
const warm = samples.filter((s) => s.t >= durationMs * 0.2);
const first = warm[0];
const last = warm[warm.length - 1];
// Single samples swing a few MB either way; growth is also given between the means of the first and the
// last minute after warm-up (6 samples each), which is what the < 5% target is judged on.
const perMinute = Math.max(1, Math.min(6, Math.floor(warm.length / 2)));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const minuteGrowthPct = (pick: (s: (typeof samples)[number]) => number) => {
  const a = mean(warm.slice(0, perMinute).map(pick));
  const b = mean(warm.slice(-perMinute).map(pick));
  return +((100 * (b - a)) / a).toFixed(1);
};
const p99s = warm.map((s) => s.lagP99).sort((a, b) => a - b);
const summary = {
  minutes,
  turns,
  webhookMessages: webhooks,
  proactive: proactives,
  sdkReconnects: reconnects,
  failures,
  heapAfterWarmupMB: +(first.heap / 2 ** 20).toFixed(1),
  heapEndMB: +(last.heap / 2 ** 20).toFixed(1),
  heapGrowthPct: +((100 * (last.heap - first.heap)) / first.heap).toFixed(1),
  heapGrowthMinuteMeansPct: minuteGrowthPct((x) => x.heap),
  rssAfterWarmupMB: +(first.rss / 2 ** 20).toFixed(1),
  rssEndMB: +(last.rss / 2 ** 20).toFixed(1),
  rssGrowthPct: +((100 * (last.rss - first.rss)) / first.rss).toFixed(1),
  rssAnonAfterWarmupMB: +(first.rssAnon / 2 ** 20).toFixed(1),
  rssAnonEndMB: +(last.rssAnon / 2 ** 20).toFixed(1),
  rssAnonGrowthPct: +((100 * (last.rssAnon - first.rssAnon)) / first.rssAnon).toFixed(1),
  rssAnonGrowthMinuteMeansPct: minuteGrowthPct((x) => x.rssAnon),
  rssFileEndMB: +(last.rssFile / 2 ** 20).toFixed(1),
  eventLoopLagP99WorstSampleMs: +(p99s[p99s.length - 1] ?? 0).toFixed(1),
  eventLoopLagP99MedianSampleMs: +(p99s[Math.floor(p99s.length / 2)] ?? 0).toFixed(1),
  errorsLogged: errorsLogged.length,
};
if (storage) {
  const c = new pg.Client({ connectionString: storage.url });
  await c.connect();
  const [row] = (await c.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes')).rows;
  await c.end();
  Object.assign(summary, { postgresDatabaseMB: +(Number(row.bytes) / 2 ** 20).toFixed(1) });
}
log(`summary ${JSON.stringify(summary)}`);
if (errorsLogged.length) log(`first error: ${errorsLogged[0].slice(0, 500)}`);
for (const w of widgets) w.close();
await sdk.close();
await server.kill('SIGTERM');
await graph.close();
await postgres?.close();
process.exit(0);
