// Sums a V8 CPU profile (.cpuprofile, as bench/proactive.ts's BENCH_CPU_PROF writes) into a few shares of its samples:
// each sample counts once, for the first group in GROUPS whose pattern matches a frame of its stack (so a store call
// made inside a machine step counts as the machine's). Then the ten hottest functions by self time.
//   npx tsx bench/profile-shares.ts /tmp/prof/proactive-parley.cpuprofile
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const GROUPS: [name: string, matches: (f: CallFrame) => boolean][] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['load client (undici)', (f) => f.url.includes('/undici/')],
  ['XState (machine steps)', (f) => f.url.includes('/xstate/')],
  ['telemetry', (f) => /src\/telemetry\/|src\/store\/[^/]+\/telemetry/.test(f.url)],
  ['service secret check', (f) => f.url.includes('src/http/auth')],
  ['store (engine, encoding)', (f) => /src\/store\/|node_modules\/(lmdb|msgpackr|ordered-binary|pg)\//.test(f.url)],
  ['fastify and node:http', (f) => /node_modules\/(fastify|find-my-way|light-my-request|secure-json-parse)\/|node:_http/.test(f.url)],
];

const file = process.argv[2];
if (!file) throw new Error('usage: npx tsx bench/profile-shares.ts FILE.cpuprofile');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

const shares = new Map<string, number>();
const selfTime = new Map<string, number>();
let total = 0;
profile.samples.forEach((leaf, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const stack: CallFrame[] = [];
  for (let id: number | undefined = leaf; id !== undefined; id = parentOf.get(id)) stack.push(byId.get(id)!.callFrame);
  const group = GROUPS.find(([, matches]) => stack.some(matches))?.[0] ?? 'other';
  shares.set(group, (shares.get(group) ?? 0) + dt);
  const f = stack[0];
  const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|work\/[^/]+)\//, '')}:${f.lineNumber + 1}`;
  selfTime.set(name, (selfTime.get(name) ?? 0) + dt);
});
const pct = (v: number) => `${((100 * v) / total).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(total / 1e6).toFixed(1)} s of samples`);
for (const [name] of [...GROUPS, ['other']]) console.log(`${pct(shares.get(name) ?? 0)}  ${name}`);
console.log('hottest by self time:');
for (const [name, v] of [...selfTime].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`${pct(v)}  ${name}`);
