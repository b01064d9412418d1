// Streaming latency: how long after the model writes its first token the
// widget sees the first `delta` frame. A fake model streams 50 tokens 20 ms
// apart to 100 concurrent conversations (closed loop: each asks again once its
// reply is final; their first messages are spread over one reply's length). Per reply: (first delta at the widget) − (first token
// written by the model). Four processes: the model (streaming-model-child.ts),
// Parley (its chat completions client, src/llm/openai-http.ts; the conversation actor; the store), the
// baseline — a bare relay that forwards the same stream with the official `openai` client
// (streaming-relay-child.ts) — and this one, which only runs the widget
// clients; the model's and the clients' stamps are performance.timeOrigin +
// performance.now(), comparable across processes. Alternating blocks.
//   npx tsx bench/streaming.ts
//   BENCH_CONVERSATIONS=20 BENCH_TURNS=3 BENCH_ROUNDS=2 npx tsx bench/streaming.ts
//   BENCH_ENGINE=postgres npx tsx bench/streaming.ts   (Parley's store on a PostgreSQL of the bench's own, fsync on)
//   BENCH_BASE_CHECKOUT=/path/to/other/checkout npx tsx bench/streaming.ts   (that Parley too, in the same alternating
//   blocks: a change against its base under the same noise; the checkout needs its node_modules)
import { fork, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { spawnParley, tempDir, TEST_SECRET } from '../test/support/parley.ts';
import { benchStorage, log, onEngine, percentile, processCpuMs, startBenchPostgres } from './lib.ts';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 100);
const TURNS = Number(process.env.BENCH_TURNS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const TOKENS = 50;
const TOKEN_GAP_MS = 20;
const TARGET = { p50: 5, p99: 20 };

// The model, in its own process: the marker in the customer's last message names the reply.
const firstToken = new Map<string, number>();
const modelChild = fork(fileURLToPath(new URL('./streaming-model-child.ts', import.meta.url)), [], {
  execArgv: ['--import', 'tsx'],
  env: { ...process.env, TOKENS: String(TOKENS), TOKEN_GAP_MS: String(TOKEN_GAP_MS) },
});
const model = await new Promise<{ url: string }>((resolve) =>
  modelChild.on('message', (m: { url?: string; marker?: string; at?: number }) => {
    if (m.url) resolve({ url: m.url });
    else firstToken.set(m.marker!, m.at!);
  }),
);
/** A µs-resolution wall clock, comparable with the model process's. */
const wallNow = () => performance.timeOrigin + performance.now();

const postgres = await startBenchPostgres();
/** A Parley from `root` (default this checkout), on a store of its own. */
const startParleyAt = async (root: string | undefined, profileName: string) =>
  spawnParley({
    root,
    storagePath: tempDir(),
    // BENCH_CPU_PROF=<dir>: a CPU profile of Parley, written when it stops.
    nodeArgs: process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, `--cpu-prof-name=${profileName}.cpuprofile`] : [],
    config: {
      storage: await benchStorage(postgres),
      llm: { provider: 'openai', base_url: model.url, model: 'fake-1' },
      channels: { web: { rate_limit_per_minute: 1_000_000 } },
      identity: { allow_anonymous: true },
    },
  });
const parley = await startParleyAt(undefined, 'parley');
// BENCH_BASE_CHECKOUT=<dir>: another checkout of Parley (a change's base, with its node_modules) as a third
// contender in the same alternating blocks, so a change is compared under the same machine noise.
const BASE_CHECKOUT = process.env.BENCH_BASE_CHECKOUT;
const base = BASE_CHECKOUT ? await startParleyAt(BASE_CHECKOUT, 'base') : undefined;
const relayChild = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./streaming-relay-child.ts', import.meta.url))], {
  env: { ...process.env, MODEL_URL: model.url },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const relayUrl = await new Promise<string>((resolve) => {
  let out = '';
  relayChild.stdout!.on('data', (d) => {
    out += d.toString();
    const m = /"url":"([^"]+)"/.exec(out);
    if (m) resolve(m[1]);
  });
});

interface Conversation {
  ws: WebSocket;
  /** Sends one message and resolves with (first delta − first token) once the final message is in. */
  turn(marker: string): Promise<number>;
  /** Delta frames received so far (pieces that reached Parley together go out as one). */
  deltas: number;
}

async function conversation(url: string, init?: Record<string, unknown>): Promise<Conversation> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let onFrame: (f: { type: string; id?: string }) => void = () => {};
  ws.on('message', (d) => onFrame(JSON.parse(d.toString())));
  if (init) {
    const ready = new Promise<void>((resolve) => (onFrame = (f) => f.type === 'ready' && resolve()));
    ws.send(JSON.stringify(init));
    await ready;
  }
  let n = 0;
  const c: Conversation = {
    ws,
    deltas: 0,
    turn: (marker) =>
      new Promise<number>((resolve, reject) => {
        let firstDeltaAt: number | undefined;
        onFrame = (f) => {
          if (f.type === 'delta') c.deltas++;
          if (f.type === 'delta' && firstDeltaAt === undefined) firstDeltaAt = wallNow();
          if (f.type === 'error') reject(new Error(JSON.stringify(f)));
          if (f.type !== 'message') return;
          // The model's note of its first token travels by IPC and may come after the reply: wait for it.
          const settle = (tries: number) => {
            const modelAt = firstToken.get(marker);
            if (modelAt === undefined && tries < 200) return void setTimeout(() => settle(tries + 1), 10);
            firstToken.delete(marker);
            if (firstDeltaAt === undefined || modelAt === undefined) return reject(new Error(`no delta or no first token for ${marker}`));
            resolve(firstDeltaAt - modelAt);
          };
          settle(0);
        };
        ws.send(JSON.stringify({ type: 'message', id: `m${++n}`, text: marker }));
      }),
  };
  return c;
}

// Conversations start spread over one reply's length, as independent customers would, not all in the same millisecond.
const STAGGER_MS = (TOKENS * TOKEN_GAP_MS) / CONVERSATIONS;

async function block(name: string, conversations: Conversation[], round: number): Promise<number[]> {
  const samples: number[] = [];
  await Promise.all(
    conversations.map(async (c, i) => {
      await new Promise((r) => setTimeout(r, i * STAGGER_MS));
      for (let t = 0; t < TURNS; t++) samples.push(await c.turn(`${name} r${round} c${i} t${t}`));
    }),
  );
  return samples;
}

/** A Parley's event-loop delay since the last scrape (ms): how late its own timers ran. */
async function parleyLag(url: string) {
  const text = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TEST_SECRET}` } }).then((r) => r.text());
  const q = (quantile: string) => Number(new RegExp(`parley_event_loop_lag_seconds\\{quantile="${quantile}"\\} ([0-9.e-]+)`).exec(text)?.[1] ?? NaN) * 1000;
  return { lagP99: +q('0.99').toFixed(1), lagMax: +q('max').toFixed(1) };
}

const stats = (samples: number[]) => {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: +percentile(s, 0.5).toFixed(2), p99: +percentile(s, 0.99).toFixed(2), max: +s[s.length - 1].toFixed(2), replies: s.length };
};

interface Contender {
  name: 'parley' | 'base' | 'relay';
  pid: number;
  /** Parley's own address, for its event-loop delay. */
  url?: string;
  conversations: Conversation[];
  samples: number[];
  cpuPerReply: number[];
}
const widgets = (p: { url: string }, prefix: string) =>
  Promise.all(
    Array.from({ length: CONVERSATIONS }, (_, i) =>
      conversation(`${p.url.replace('http', 'ws')}/widget/ws`, { type: 'init', customerId: `${prefix}-${i}`, email: `s${i}@example.com` }),
    ),
  );
const contenders: Contender[] = [
  { name: 'parley', pid: parley.child.pid!, url: parley.url, conversations: await widgets(parley, 'bench-stream'), samples: [], cpuPerReply: [] },
];
if (base)
  contenders.push({ name: 'base', pid: base.child.pid!, url: base.url, conversations: await widgets(base, 'bench-base'), samples: [], cpuPerReply: [] });
contenders.push({
  name: 'relay',
  pid: relayChild.pid!,
  conversations: await Promise.all(Array.from({ length: CONVERSATIONS }, () => conversation(relayUrl))),
  samples: [],
  cpuPerReply: [],
});

log(
  `streaming${onEngine()}: ${CONVERSATIONS} conversations, ${TOKENS} tokens ${TOKEN_GAP_MS} ms apart, ${TURNS} replies each per block, ${ROUNDS} rounds${base ? `; base: ${BASE_CHECKOUT}` : ''}`,
);
// Warm-up (JIT, first LMDB writes, connection pools), not counted.
for (const c of contenders) await block(`warm-${c.name}`, c.conversations, 0);
for (let r = 1; r <= ROUNDS; r++) {
  for (const c of r % 2 ? contenders : [...contenders].reverse()) {
    if (c.url) await parleyLag(c.url);
    const cpuBefore = processCpuMs(c.pid);
    const deltasBefore = c.conversations.reduce((n, w) => n + w.deltas, 0);
    const samples = await block(c.name, c.conversations, r);
    // CPU per reply (every thread, /proc): what the process costs, less sensitive to the machine's load than latency.
    const cpu = {
      cpuMsPerReply: +((processCpuMs(c.pid) - cpuBefore) / samples.length).toFixed(2),
      deltasPerReply: +((c.conversations.reduce((n, w) => n + w.deltas, 0) - deltasBefore) / samples.length).toFixed(1),
    };
    c.samples.push(...samples);
    c.cpuPerReply.push(cpu.cpuMsPerReply);
    log(`  round ${r}/${ROUNDS} ${c.name}: ${JSON.stringify(Object.assign(stats(samples), cpu, c.url ? await parleyLag(c.url) : {}))}`);
  }
}
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((x, y) => x - y),
    0.5,
  );
const summary = Object.fromEntries(contenders.map((c) => [c.name, stats(c.samples)]));
for (const c of contenders)
  log(`${c.name.padEnd(6)}: first delta − first token ${JSON.stringify(summary[c.name])} ms; CPU per reply (median of blocks) ${median(c.cpuPerReply)} ms`);
const p = summary.parley;
const b = summary.relay;
log(
  `parley p50 ${p.p50} ms (target ≤ ${TARGET.p50}: ${p.p50 <= TARGET.p50 ? 'met' : 'missed'}), p99 ${p.p99} ms (target ≤ ${TARGET.p99}: ${p.p99 <= TARGET.p99 ? 'met' : 'missed'})`,
);
log(
  `ratio parley/relay: p50 ${(p.p50 / b.p50).toFixed(2)}, p99 ${(p.p99 / b.p99).toFixed(2)}; Parley adds ${(p.p50 - b.p50).toFixed(2)} ms at p50, ${(p.p99 - b.p99).toFixed(2)} ms at p99`,
);
if (summary.base) log(`parley/base: p50 ${(p.p50 / summary.base.p50).toFixed(2)}, p99 ${(p.p99 / summary.base.p99).toFixed(2)}`);

for (const c of contenders) for (const w of c.conversations) w.ws.terminate();
relayChild.kill();
await base?.kill('SIGTERM');
await parley.kill('SIGTERM');
await postgres?.close();
modelChild.disconnect();
