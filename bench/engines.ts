// Conversation turns on both storage engines in one run: two Parley processes, one on LMDB (a temp dir) and one
// on PostgreSQL (a server of this bench's own, fsync on, a fresh database), the same closed-loop widget load
// from this process (the instant offline LLM, one SDK call per turn, as bench/turns.ts), in alternating blocks
// (ABBA: lmdb, postgres, then postgres, lmdb), so both engines see the same machine noise.
// Per block: turns/s, Parley's own CPU per turn (every thread, /proc), and on PostgreSQL the database server's
// CPU per turn (all its processes) and its committed transactions per turn (pg_stat_database).
// Target (issue 16): PostgreSQL's turns/s ≥ 0.5 of LMDB's in the same run.
//   node --import tsx bench/engines.ts
//   BENCH_CONNECTIONS=200 BENCH_ROUNDS=2 BENCH_BLOCK_MS=2000 node --import tsx bench/engines.ts
//   BENCH_PG_STATEMENTS=1 …   (pg_stat_statements: the statements a turn runs on PostgreSQL, counted; slows PostgreSQL a little)
//   BENCH_CPU_PROF=<dir> …    (a CPU profile of each Parley, written when it stops)
import { spawnParley, tempDir, type ParleyProcess } from '../test/support/parley.ts';
import { benchPostgres, benchStorage, committedTransactions, log, logStatements, percentile, postgresCpuMs, processCpuMs, resetStatements } from './lib.ts';
import { clients } from './widget-load.ts';
import { orderStatusBackend } from './order-backend.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1000);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const TARGET = 0.5;

type Engine = 'lmdb' | 'postgres';

const server = await benchPostgres();
const postgresStorage = (await benchStorage(server))!;
const postgresUrl = postgresStorage.url;

const config = (storage?: typeof postgresStorage) => ({
  storage,
  logging: { level: 'warn' as const },
  channels: { web: { rate_limit_per_minute: 1_000_000 } },
});
const cpuProf = (engine: Engine) =>
  process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, `--cpu-prof-name=${engine}.cpuprofile`] : [];
const parleys: Record<Engine, ParleyProcess> = {
  lmdb: await spawnParley({ storagePath: tempDir('parley-engines-'), config: config(), nodeArgs: cpuProf('lmdb') }),
  postgres: await spawnParley({ storagePath: tempDir('parley-engines-'), config: config(postgresStorage), nodeArgs: cpuProf('postgres') }),
};

const sdks = await Promise.all((['lmdb', 'postgres'] as const).map((engine) => orderStatusBackend(parleys[engine].url)));

log(`engines: ${CONNECTIONS} connections per engine, ${ROUNDS} rounds × ${BLOCK_MS} ms per engine (offline LLM, one SDK call per turn), ABBA`);
const load = async (engine: Engine) =>
  clients(
    CONNECTIONS,
    `${parleys[engine].url.replace('http', 'ws')}/widget/ws`,
    (i) => JSON.stringify({ type: 'init', customerId: `bench-${i}`, email: `b${i}@example.com` }),
    (f) => f.type === 'message',
  );
const loads = { lmdb: await load('lmdb'), postgres: await load('postgres') };

interface Block {
  turns: number;
  rps: number;
  parleyCpuUsPerTurn: number;
  postgresCpuUsPerTurn?: number;
  transactionsPerTurn?: number;
  latenciesMs: number[];
}

async function block(engine: Engine): Promise<Block> {
  const pid = parleys[engine].child.pid!;
  const onPostgres = engine === 'postgres';
  const before = { parley: processCpuMs(pid), postgres: postgresCpuMs(server), tx: onPostgres ? await committedTransactions(postgresUrl) : 0 };
  const r = await loads[engine].block(BLOCK_MS);
  const after = { parley: processCpuMs(pid), postgres: postgresCpuMs(server) };
  const b: Block = { turns: r.requests, rps: r.rps, parleyCpuUsPerTurn: ((after.parley - before.parley) * 1000) / r.requests, latenciesMs: r.latenciesMs };
  if (onPostgres) {
    b.postgresCpuUsPerTurn = ((after.postgres - before.postgres) * 1000) / r.requests;
    await new Promise((resolve) => setTimeout(resolve, 1000)); // backends report their statistics within ~1 s
    b.transactionsPerTurn = ((await committedTransactions(postgresUrl)) - before.tx) / r.requests;
  }
  return b;
}

const show = (b: Block) =>
  `${Math.round(b.rps)} turns/s, Parley ${b.parleyCpuUsPerTurn.toFixed(0)} µs CPU/turn` +
  (b.postgresCpuUsPerTurn === undefined
    ? ''
    : `, PostgreSQL ${b.postgresCpuUsPerTurn.toFixed(0)} µs CPU/turn, ${b.transactionsPerTurn!.toFixed(2)} commits/turn`);

// Warm-up: JIT, the first writes, PostgreSQL's pool and prepared statements.
for (const engine of ['lmdb', 'postgres'] as const) log(`  warm-up ${engine}: ${show(await block(engine))}`);
await resetStatements(postgresUrl);

const blocks: Record<Engine, Block[]> = { lmdb: [], postgres: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const engine of round % 2 === 0 ? (['lmdb', 'postgres'] as const) : (['postgres', 'lmdb'] as const)) {
    const b = await block(engine);
    blocks[engine].push(b);
    log(`  round ${round + 1}/${ROUNDS} ${engine.padEnd(8)}: ${show(b)}`);
  }
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const median = (xs: number[]) => [...xs].sort((m, n) => m - n)[xs.length >> 1];
const summary = (bs: Block[]) => {
  const l = bs.flatMap((b) => b.latenciesMs).sort((a, b) => a - b);
  const turns = bs.reduce((n, b) => n + b.turns, 0);
  const s: Record<string, number> = {
    turnsPerSecond: Math.round(mean(bs.map((b) => b.rps))),
    p50: +percentile(l, 0.5).toFixed(1),
    p99: +percentile(l, 0.99).toFixed(1),
    turns,
    parleyCpuUsPerTurn: +mean(bs.map((b) => b.parleyCpuUsPerTurn)).toFixed(1),
  };
  if (bs[0].postgresCpuUsPerTurn !== undefined) {
    s.postgresCpuUsPerTurn = +mean(bs.map((b) => b.postgresCpuUsPerTurn!)).toFixed(1);
    s.commitsPerTurn = +mean(bs.map((b) => b.transactionsPerTurn!)).toFixed(2);
  }
  return s;
};
const lmdb = summary(blocks.lmdb);
const postgres = summary(blocks.postgres);
log(`lmdb    : ${JSON.stringify(lmdb)}`);
log(`postgres: ${JSON.stringify(postgres)}`);
const ratio = postgres.turnsPerSecond / lmdb.turnsPerSecond;
const perRound = blocks.postgres.map((b, i) => b.rps / blocks.lmdb[i].rps);
log(`per round: postgres/lmdb ${perRound.map((r) => r.toFixed(2)).join(', ')}`);
log(
  `turns/s ratio postgres/lmdb = ${ratio.toFixed(2)} (median of rounds ${median(perRound).toFixed(2)}) (target ≥ ${TARGET}: ${ratio >= TARGET ? 'met' : 'missed'})`,
);

await logStatements(
  postgresUrl,
  blocks.postgres.reduce((n, b) => n + b.turns, 0),
  'turn',
);

for (const l of Object.values(loads)) l.close();
for (const sdk of sdks) await sdk.close();
for (const p of Object.values(parleys)) await p.kill('SIGTERM');
await server.close();
process.exit(0);
