// `npm run bench`: every benchmark in sequence, each in its own process.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const benches: [string, string[]][] = [
  ['sdk-invoke.ts', []],
  ['turns.ts', ['--expose-gc']],
  ['webhook.ts', []],
  ['proactive.ts', []],
  ['telemetry-cost.ts', []],
  ['streaming.ts', []],
];
for (const [file, flags] of benches) {
  process.stdout.write(`\n=== bench/${file} ===\n`);
  const r = spawnSync(process.execPath, [...flags, '--import', 'tsx', join(here, file)], { stdio: 'inherit' });
  if (r.status !== 0) process.stdout.write(`bench/${file} exited with ${r.status}\n`);
}
process.stdout.write('\nThe 10-minute soak is separate: npx tsx bench/soak.ts\n');
