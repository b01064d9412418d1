// `npm run bench`: every benchmark in sequence, each in its own process, on one storage engine or both.
//   npm run bench                        LMDB (or BENCH_ENGINE's engine)
//   npm run bench -- --engine postgres   each bench on a PostgreSQL of its own (fsync on)
//   npm run bench -- --engine both       the whole list on LMDB, then on PostgreSQL
// bench/engines.ts (the two engines' turns in one run, alternating) runs once at the end whatever the engine.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { benchEngine } from './lib.ts';

const { values } = parseArgs({ options: { engine: { type: 'string' } } });
const chosen = values.engine ?? process.env.BENCH_ENGINE ?? 'lmdb';
const engines = chosen === 'both' ? (['lmdb', 'postgres'] as const) : [benchEngine({ BENCH_ENGINE: chosen })];

const here = dirname(fileURLToPath(import.meta.url));
const benches: [string, string[]][] = [
  ['disk-sync.ts', []], // context for the acknowledgement tails: the disk's own sync latency
  ['sdk-invoke.ts', []],
  ['turns.ts', ['--expose-gc']],
  ['webhook.ts', []],
  ['proactive.ts', []],
  ['telemetry-cost.ts', []],
  ['streaming.ts', []],
  ['turn-burst.ts', []],
  ['peer.ts', []], // against the OpenAI Agents SDK JS (issue 31)
  ['idle-sockets.ts', []], // the turn p99 with 19,000 idle widget sockets open (issue 31)
];
/** Runs one bench; `engine` undefined: a bench that runs both engines itself. */
const run = (file: string, flags: string[], engine?: 'lmdb' | 'postgres') => {
  process.stdout.write(`\n=== bench/${file} (${engine ? `BENCH_ENGINE=${engine}` : 'both engines'}) ===\n`);
  const r = spawnSync(process.execPath, [...flags, '--import', 'tsx', join(here, file)], {
    stdio: 'inherit',
    env: Object.assign({}, process.env, { BENCH_ENGINE: engine ?? 'lmdb' }),
  });
  if (r.status !== 0) process.stdout.write(`bench/${file} exited with ${r.status}\n`);
};
for (const engine of engines) for (const [file, flags] of benches) run(file, flags, engine);
run('engines.ts', []);
run('lmdb-check.ts', []); // LMDB's own files: the start-up check on a 1 GB data.mdb
process.stdout.write('\nThe 10-minute soak is separate: npx tsx bench/soak.ts (BENCH_ENGINE=postgres for PostgreSQL)\n');
