// Idle customers must not slow the active ones (issue 31, part 6): the turn p99 at a fixed 100 turns/s with IDLE idle
// widget sockets open on the node, against the same with none, in alternating blocks (ABBA: none, idle, idle, none…;
// the idle sockets are opened before the first idle block of a pair and closed after the last).
//  - Parley: its own process (src/main.ts, offline LLM, production disk reserve), its tool in a backend process through
//    the real SDK (one SDK call per turn, as bench/turns.ts);
//  - the idle sockets: OPENERS child processes (idle-sockets-child.ts), each from a loopback address of its own, each
//    socket signed in as its own customer (`init`, `ready`) and then silent, as a widget left open in a tab;
//  - the active load, from this process: ACTIVE signed-in widgets, messages started at RATE per second whatever the
//    server does (open loop), each turn timed from its message to its reply.
// And the heap Parley holds per idle socket: its `nodejs_heap_size_used_bytes` (/metrics) with the idle sockets open
// against before they were, divided by their number (no forced GC: an estimate).
//   npx tsx bench/idle-sockets.ts
//   BENCH_IDLE=19000 BENCH_RATE=100 BENCH_ROUNDS=4 BENCH_BLOCK_MS=10000 npx tsx bench/idle-sockets.ts
// File descriptors: Parley holds one per socket. This machine's hard limit is 20,000 per process (`ulimit -Hn`; an
// unprivileged process cannot raise it), so the default is 19,000 idle sockets; where the limit allows, run with
// BENCH_IDLE=20000 (and `ulimit -n` raised in the shell that starts the bench: the children inherit it).
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { spawnParley, tempDir, TEST_SECRET } from '../test/support/parley.ts';
import { log, parleyStorage, percentile, startBenchPostgres } from './lib.ts';
import { alternateRounds, spread } from './rounds.ts';

const IDLE = Number(process.env.BENCH_IDLE ?? 19_000);
const OPENERS = Number(process.env.BENCH_OPENERS ?? 5);
const ACTIVE = Number(process.env.BENCH_ACTIVE ?? 200);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

const postgres = await startBenchPostgres();
const parley = await spawnParley({
  storagePath: tempDir(),
  config: { storage: await parleyStorage(postgres), channels: { web: { rate_limit_per_minute: 1_000_000 } } },
});
const wsUrl = `${parley.url.replace('http', 'ws')}/widget/ws`;
const backend = fork(fileURLToPath(new URL('./peer-backend-child.ts', import.meta.url)), [], {
  execArgv: ['--import', 'tsx'],
  env: { ...process.env, PARLEY_URL: parley.url },
});
await new Promise((r) => backend.once('message', r));

/** A gauge of Parley's /metrics (prom-client's default process gauges). */
async function parleyGauge(name: string): Promise<number> {
  const text = await (await fetch(`${parley.url}/metrics`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}
/** Parley's V8 heap in use. */
const parleyHeapBytes = () => parleyGauge('nodejs_heap_size_used_bytes');

/**
 * Waits until Parley has handled the closing of the idle sockets (its open handles back near `baseline`): the 19,000
 * closes reach it after the openers are done, and a block timed meanwhile measured them (p99 600 ms without idle sockets).
 */
async function closesHandled(baseline: number) {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline && (await parleyGauge('nodejs_active_handles_total')) > baseline + 100) await new Promise((r) => setTimeout(r, 200));
}

/** ACTIVE signed-in widgets; `block` starts RATE turns per second among them for `ms` and returns each turn's time. */
async function activeWidgets() {
  const sockets: { ws: WebSocket; sent: number[] }[] = [];
  const latencies: number[] = [];
  for (let i = 0; i < ACTIVE; i++) {
    const ws = new WebSocket(wsUrl);
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'init', customerId: `active-${i}`, email: `active-${i}@example.com` }));
    await new Promise((r) => ws.once('message', r));
    const s = { ws, sent: [] as number[] };
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString()) as { type: string; role?: string };
      if (f.type === 'message' && f.role === 'assistant' && s.sent.length) latencies.push(performance.now() - s.sent.shift()!);
    });
    sockets.push(s);
  }
  let seq = 0;
  const block = async (ms: number) => {
    latencies.length = 0;
    const started = performance.now();
    const total = Math.floor((RATE * ms) / 1000);
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - started) * RATE) / 1000) + 1);
      for (; sent < due; sent++) {
        const s = sockets[sent % sockets.length];
        s.sent.push(performance.now());
        s.ws.send(JSON.stringify({ type: 'message', id: `i${++seq}`, text: 'what is the status of order 1001?' }));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const deadline = performance.now() + 60_000;
    while (latencies.length < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const sorted = [...latencies].sort((a, b) => a - b);
    return { turns: sorted.length, missing: total - sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
  };
  return { block, close: () => sockets.forEach((s) => s.ws.terminate()) };
}

/** The idle sockets, opened from OPENERS processes; resolves once every one is signed in. */
async function openIdle(round: number) {
  const per = Math.ceil(IDLE / OPENERS);
  const children: ChildProcess[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: OPENERS }, (_, k) => {
      const child = fork(fileURLToPath(new URL('./idle-sockets-child.ts', import.meta.url)), [], {
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, URL: wsUrl, COUNT: String(Math.min(per, IDLE - k * per)), LOCAL_ADDRESS: `127.0.${round + 1}.${k + 2}`, PREFIX: `idle${k}` },
      });
      children.push(child);
      return new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`idle opener ${k} exited with ${code}`)));
      });
    }),
  );
  log(`  ${IDLE} idle sockets open (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  return async () => {
    await Promise.all(children.map((c) => new Promise((r) => (c.once('message', r), c.send('close')))));
  };
}

const active = await activeWidgets();
log(`idle sockets: ${IDLE} idle widgets from ${OPENERS} processes; ${ACTIVE} active widgets at ${RATE} turns/s; ${ROUNDS} rounds × ${BLOCK_MS} ms`);
log(`  warm-up: ${JSON.stringify(await active.block(BLOCK_MS))}`);
const heapNone = await parleyHeapBytes();
const handlesNone = await parleyGauge('nodejs_active_handles_total');
let closeIdle: (() => Promise<void>) | undefined;
let opened = 0;
const blocks = await alternateRounds(
  ROUNDS,
  {
    none: async () => {
      if (closeIdle) {
        await closeIdle();
        await closesHandled(handlesNone);
      }
      closeIdle = undefined;
      return active.block(BLOCK_MS);
    },
    idle: async () => {
      if (!closeIdle) {
        closeIdle = await openIdle(opened++);
        const heap = await parleyHeapBytes();
        log(
          `  Parley heap: ${(heapNone / 2 ** 20).toFixed(0)} MB without, ${(heap / 2 ** 20).toFixed(0)} MB with them: ${((heap - heapNone) / IDLE / 1024).toFixed(2)} KB per idle socket (before GC)`,
        );
      }
      return active.block(BLOCK_MS);
    },
  },
  (name, r, b) =>
    log(
      `  round ${r + 1}/${ROUNDS} ${name.padEnd(4)}: ${JSON.stringify({ p50: +b.p50.toFixed(1), p99: +b.p99.toFixed(1), turns: b.turns, missing: b.missing })}`,
    ),
);
if (closeIdle) await closeIdle();
const p99s = (name: 'none' | 'idle') => spread(blocks[name].map((b) => b.p99));
log(`turn p99 without idle sockets: median ${p99s('none').median.toFixed(1)} ms; with ${IDLE}: median ${p99s('idle').median.toFixed(1)} ms`);
const ratios = blocks.idle.map((b, i) => b.p99 / blocks.none[i].p99);
const s = spread(ratios);
log(`idle p99 ratio = ${s.median.toFixed(2)} (median of ${s.n} rounds; min–max ${s.min.toFixed(2)}–${s.max.toFixed(2)}) (target ≤ 1.5)`);
active.close();
backend.disconnect();
await parley.kill('SIGTERM');
await postgres?.close();
process.exit(0);
