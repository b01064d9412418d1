// Parley against a peer, the OpenAI Agents SDK JS, doing the same conversation turn, in one process tree and in
// alternating blocks (ABBA, bench/rounds.ts). The turn: the customer asks for an order's status; the model (a fake
// OpenAI-compatible server over HTTP, its own process, streaming) calls getOrderStatus; the tool answers; the model
// answers. Processes:
//  - the model (peer-model-child.ts), shared by both contenders;
//  - Parley (its production build, `node --enable-source-maps dist/main.js`, built first by scripts/build.ts; production
//    disk reserve, telemetry on), its tool in a backend process through the real SDK
//    over a real socket (peer-backend-child.ts), its customers CONVERSATIONS widget sockets driven from this process;
//  - the peer (peer-agents-child.ts): the Agents SDK with the same model over HTTP, its tool in-process, a durable
//    session on LMDB (the simplest durable one: see that file), its CONVERSATIONS conversations driven in-process.
// Each round gives `peer ratio` = Parley's turns/s ÷ the peer's, and each contender's CPU per turn (its processes'
// user + system time over the block, every thread, from /proc; the model's and the load's are nobody's). Judged: the
// medians of the per-round figures.
//   npm run bench:peer
//   BENCH_CONVERSATIONS=200 BENCH_ROUNDS=8 BENCH_BLOCK_MS=5000 npx tsx bench/peer.ts
//   BENCH_ENGINE=postgres npx tsx bench/peer.ts   (Parley on a PostgreSQL of the bench's own, fsync on; the peer's
//   session stays on LMDB)
//   BENCH_CPU_PROF=<dir>: CPU profiles of Parley in <dir>/parley (written when it stops) for bench/profile-shares.ts
//   BENCH_BASE_CHECKOUT=<dir>: another checkout's Parley too (with its node_modules): `change ratio` = this ÷ that
//   BENCH_ENTRY=source: Parley's source through tsx instead of the build (BENCH_BASE_ENTRY: the same for the base)
//   BENCH_DEFER_READS=1: Parley with conversation.defer_read_call_records on (a turn commits twice; README)
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnParley, tempDir } from '../test/support/parley.ts';
import { log, onEngine, parleyStorage, percentile, processCpuMs, startBenchPostgres } from './lib.ts';
import type { PeerBlock } from './peer-agents-child.ts';
import { alternateRounds, MIN_ROUNDS, perRoundRatios, ratioLine, spread } from './rounds.ts';
import { clients } from './widget-load.ts';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 200);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? MIN_ROUNDS);

/** A child process of this bench; resolves with its first message (its URL, or that it is ready). */
function child<M>(file: string, env: Record<string, string>): Promise<{ proc: ChildProcess; first: M }> {
  const proc = fork(fileURLToPath(new URL(file, import.meta.url)), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    proc.once('message', (first: M) => resolve({ proc, first }));
    proc.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

interface Block {
  turns: number;
  seconds: number;
  turnsPerSecond: number;
  /** CPU µs per turn of the contender's processes. */
  cpuUsPerTurn: number;
  /** CPU µs per turn of its first process alone (Parley without its SDK backend). */
  mainCpuUsPerTurn: number;
  p50: number;
  p99: number;
}

/** Runs `run` and measures the CPU `pids` used meanwhile. */
async function measured(pids: number[], run: () => Promise<{ turns: number; seconds: number; latenciesMs: number[] }>): Promise<Block> {
  const cpu = () => pids.map((pid) => processCpuMs(pid));
  const cpu0 = cpu();
  const r = await run();
  const used = cpu().map((ms, i) => ms - cpu0[i]);
  const cpuMs = used.reduce((a, b) => a + b, 0);
  const l = [...r.latenciesMs].sort((a, b) => a - b);
  return {
    turns: r.turns,
    seconds: r.seconds,
    turnsPerSecond: r.turns / r.seconds,
    cpuUsPerTurn: (cpuMs * 1000) / r.turns,
    mainCpuUsPerTurn: (used[0] * 1000) / r.turns,
    p50: +percentile(l, 0.5).toFixed(1),
    p99: +percentile(l, 0.99).toFixed(1),
  };
}

type Entry = 'source' | 'build';
const ENTRY = (process.env.BENCH_ENTRY ?? 'build') as Entry;
const BASE_ENTRY = (process.env.BENCH_BASE_ENTRY ?? ENTRY) as Entry;
/** The production build of the checkout at `root` (default this one), as `npm run build` makes it. */
function build(root: string) {
  log(`building ${root} (scripts/build.ts)…`);
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: root, stdio: 'ignore' });
}
const THIS_CHECKOUT = fileURLToPath(new URL('..', import.meta.url));

const model = await child<{ url: string }>('./peer-model-child.ts', {});
const postgres = await startBenchPostgres();
/** A Parley from `root` (default this checkout) with its backend and CONVERSATIONS widgets; `block` measures one block. */
async function parleyContender(root: string | undefined, name: string, entry: Entry) {
  if (entry === 'build') build(root ?? THIS_CHECKOUT);
  const parley = await spawnParley({
    root,
    entry,
    storagePath: tempDir(),
    nodeArgs: process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}/${name}`] : [],
    config: {
      storage: await parleyStorage(postgres),
      llm: { provider: 'openai', base_url: model.first.url, model: 'fake-1', max_retries: 0 },
      channels: { web: { rate_limit_per_minute: 1_000_000 } },
      // This checkout's only: a base from before the option would refuse the key.
      ...(root === undefined && process.env.BENCH_DEFER_READS === '1' ? { conversation: { defer_read_call_records: true } } : {}),
    },
  });
  const backend = await child('./peer-backend-child.ts', { PARLEY_URL: parley.url });
  const widgets = await clients(
    CONVERSATIONS,
    `${parley.url.replace('http', 'ws')}/widget/ws`,
    (i) => JSON.stringify({ type: 'init', customerId: `peer-bench-${i}`, email: `p${i}@example.com` }),
    (f) => f.type === 'message',
  );
  return {
    block: () =>
      measured([parley.child.pid!, backend.proc.pid!], async () => {
        const r = await widgets.block(BLOCK_MS);
        return { turns: r.requests, seconds: r.seconds, latenciesMs: r.latenciesMs };
      }),
    async close() {
      widgets.close();
      backend.proc.disconnect();
      await parley.kill('SIGTERM');
    },
  };
}

const parley = await parleyContender(undefined, 'parley', ENTRY);
// BENCH_BASE_CHECKOUT=<dir>: that checkout's Parley as a third contender (a change against its base, same noise).
const BASE = process.env.BENCH_BASE_CHECKOUT;
const base = BASE ? await parleyContender(BASE, 'base', BASE_ENTRY) : undefined;
const peer = await child('./peer-agents-child.ts', { MODEL_URL: model.first.url, CONVERSATIONS: String(CONVERSATIONS) });
const peerBlock = (durationMs: number) =>
  new Promise<PeerBlock>((resolve) => {
    peer.proc.once('message', (r: PeerBlock) => resolve(r));
    peer.proc.send({ durationMs });
  });

const contenders: Record<string, () => Promise<Block>> = {
  parley: parley.block,
  peer: () => measured([peer.proc.pid!], () => peerBlock(BLOCK_MS)),
};
if (base) contenders.base = base.block;
const show = (b: Block) =>
  JSON.stringify({
    turnsPerSecond: Math.round(b.turnsPerSecond),
    cpuUsPerTurn: Math.round(b.cpuUsPerTurn),
    mainCpuUsPerTurn: Math.round(b.mainCpuUsPerTurn),
    p50: b.p50,
    p99: b.p99,
    turns: b.turns,
  });

log(
  `peer${onEngine()}: Parley's ${ENTRY}${base ? ` (base: its ${BASE_ENTRY})` : ''}; ${CONVERSATIONS} conversations each, ${ROUNDS} rounds × ${BLOCK_MS} ms per contender; the OpenAI Agents SDK JS with an LMDB session, its tool in-process; Parley's tool through the SDK`,
);
for (const [name, block] of Object.entries(contenders)) log(`  warm-up ${name.padEnd(6)}: ${show(await block())}`);
const rounds = await alternateRounds(ROUNDS, contenders, (name, r, b) => log(`  round ${r + 1}/${ROUNDS} ${name.padEnd(6)}: ${show(b)}`));
const cpu = (blocks: Block[]) => spread(blocks.map((b) => b.cpuUsPerTurn));
const tps = (blocks: Block[]) => spread(blocks.map((b) => b.turnsPerSecond));
log(ratioLine('parley turns/s', tps(rounds.parley), '', 0));
log(ratioLine('peer turns/s', tps(rounds.peer), '', 0));
log(ratioLine('parley CPU µs per turn', cpu(rounds.parley), '(Parley and its SDK backend)', 0));
log(ratioLine('parley server CPU µs per turn', spread(rounds.parley.map((b) => b.mainCpuUsPerTurn)), '(Parley alone)', 0));
log(ratioLine('peer CPU µs per turn', cpu(rounds.peer), '', 0));
log(ratioLine('CPU per turn ratio', spread(perRoundRatios(rounds.parley, rounds.peer, (b) => b.cpuUsPerTurn)), '(Parley ÷ peer; lower is better)'));
log(ratioLine('peer ratio', spread(perRoundRatios(rounds.parley, rounds.peer, (b) => b.turnsPerSecond)), '(target ≥ 2.0)'));

if (base) {
  log(ratioLine('change ratio', spread(perRoundRatios(rounds.parley, rounds.base, (b) => b.turnsPerSecond)), `(turns/s of this checkout ÷ ${BASE}'s)`));
  log(ratioLine('change CPU ratio', spread(perRoundRatios(rounds.parley, rounds.base, (b) => b.cpuUsPerTurn)), '(CPU per turn, this ÷ base)'));
  log(ratioLine('base CPU µs per turn', cpu(rounds.base), '', 0));
}
await parley.close();
await base?.close();
for (const c of [peer, model]) c.proc.disconnect();
await postgres?.close();
process.exit(0);
