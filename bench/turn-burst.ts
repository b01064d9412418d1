// A burst of turn starts: N widget conversations send a message in the same
// moment while the model holds back its first token (nothing streams), and
// Parley's event-loop delay over the burst is read from /metrics (`max`: the
// longest its timers were held up, i.e. the longest stretch of synchronous
// work). It is what a reply already streaming in another conversation would
// wait for. Repeated BENCH_BURSTS times; medians over the bursts.
//   npx tsx bench/turn-burst.ts
//   BENCH_CONVERSATIONS=100 BENCH_BURSTS=10 BENCH_ENGINE=postgres npx tsx bench/turn-burst.ts
import { WebSocket } from 'ws';
import { startFakeOpenAi } from '../test/support/fake-openai.ts';
import { spawnParley, tempDir, TEST_SECRET } from '../test/support/parley.ts';
import { benchStorage, log, onEngine, percentile, processCpuMs, startBenchPostgres } from './lib.ts';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 100);
const BURSTS = Number(process.env.BENCH_BURSTS ?? 10);

const model = await startFakeOpenAi();
// The first token comes well after the burst is over: the burst is measured alone.
model.fallback({ text: 'OK, noted.', delayMs: 1500 });
const postgres = await startBenchPostgres();
const parley = await spawnParley({
  root: process.env.BENCH_BASE_CHECKOUT,
  storagePath: tempDir(),
  nodeArgs: process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
  config: {
    storage: await benchStorage(postgres),
    llm: { provider: 'openai', base_url: model.url, model: 'fake-1' },
    channels: { web: { rate_limit_per_minute: 1_000_000 } },
    identity: { allow_anonymous: true },
  },
});

async function lag() {
  const text = await fetch(`${parley.url}/metrics`, { headers: { authorization: `Bearer ${TEST_SECRET}` } }).then((r) => r.text());
  const q = (quantile: string) => Number(new RegExp(`parley_event_loop_lag_seconds\\{quantile="${quantile}"\\} ([0-9.e-]+)`).exec(text)?.[1] ?? NaN) * 1000;
  return { p99: q('0.99'), max: q('max') };
}

interface Widget {
  send(text: string): Promise<void>;
  close(): void;
}
async function widget(i: number): Promise<Widget> {
  const ws = new WebSocket(`${parley.url.replace('http', 'ws')}/widget/ws`);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let onFrame: (f: { type: string }) => void = () => {};
  ws.on('message', (d) => onFrame(JSON.parse(d.toString())));
  const ready = new Promise<void>((resolve) => (onFrame = (f) => f.type === 'ready' && resolve()));
  ws.send(JSON.stringify({ type: 'init', customerId: `burst-${i}`, email: `b${i}@example.com` }));
  await ready;
  let n = 0;
  return {
    // Resolves when the reply is in (the next burst starts from an idle Parley).
    send: (text) =>
      new Promise<void>((resolve) => {
        onFrame = (f) => f.type === 'message' && resolve();
        ws.send(JSON.stringify({ type: 'message', id: `m${++n}`, text }));
      }),
    close: () => ws.terminate(),
  };
}

const widgets = await Promise.all(Array.from({ length: CONVERSATIONS }, (_, i) => widget(i)));
log(
  `turn burst${onEngine()}: ${CONVERSATIONS} turn starts at once, ${BURSTS} bursts${process.env.BENCH_BASE_CHECKOUT ? ` (Parley of ${process.env.BENCH_BASE_CHECKOUT})` : ''}`,
);
await Promise.all(widgets.map((w) => w.send('warm-up')));
const maxes: number[] = [];
const cpus: number[] = [];
for (let b = 0; b < BURSTS; b++) {
  await new Promise((r) => setTimeout(r, 300));
  await lag();
  const cpu = processCpuMs(parley.child.pid!);
  await Promise.all(widgets.map((w) => w.send(`burst ${b}`)));
  const l = await lag();
  maxes.push(l.max);
  cpus.push((processCpuMs(parley.child.pid!) - cpu) / CONVERSATIONS);
  log(`  burst ${b + 1}: event-loop delay max ${l.max.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms`);
}
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((x, y) => x - y),
    0.5,
  );
log(`median over bursts: event-loop delay max ${median(maxes).toFixed(1)} ms; Parley CPU per turn ${median(cpus).toFixed(2)} ms`);
for (const w of widgets) w.close();
await parley.kill('SIGTERM');
await postgres?.close();
await model.close();
