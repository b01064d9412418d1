// Where a turn's CPU goes, from V8 CPU profiles (bench/peer.ts with BENCH_CPU_PROF=<dir> writes one per contender):
// self time grouped by npm package, by our own file, or by V8/Node's own work ("(garbage collector)", "writev"…),
// in µs per turn (the profile's busy samples ÷ TURNS) and as a share of the busy time (idle left out). Two profiles:
// side by side, before and after.
//   npx tsx bench/profile-packages.ts TURNS_A A.cpuprofile [TURNS_B B.cpuprofile]
import { readFileSync } from 'node:fs';

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  samples: number[];
  timeDeltas: number[];
}

/** `nm:lmdb`, `src/llm/openai.ts`, `node:internal/…`, or `(writev)` for a frame without a file. */
function placeOf(f: { functionName: string; url: string }): string {
  if (!f.url) return `(${f.functionName})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f.url);
  if (pkg) return `npm ${pkg[1]}`;
  // The production build is one bundle: all of Parley's own code in one place, whichever checkout it came from.
  if (/\/dist\/main\.js$/.test(f.url)) return "Parley's own code (dist/main.js)";
  const own = /\/((?:src|machines|sdk\/src)\/.*)$/.exec(f.url);
  return own ? own[1] : f.url.replace(/^file:\/\//, '');
}

function selfTimes(file: string): { busy: number; byPlace: Map<string, number> } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const placeById = new Map(profile.nodes.map((n) => [n.id, placeOf(n.callFrame)]));
  const byPlace = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const place = placeById.get(id)!;
    const dt = profile.timeDeltas[i] ?? 0;
    if (place === '((idle))' || place === '((program))') return;
    busy += dt;
    byPlace.set(place, (byPlace.get(place) ?? 0) + dt);
  });
  return { busy, byPlace };
}

const [turnsA, fileA, turnsB, fileB] = process.argv.slice(2);
if (!fileA) throw new Error('usage: npx tsx bench/profile-packages.ts TURNS_A A.cpuprofile [TURNS_B B.cpuprofile]');
const runs = [[Number(turnsA), selfTimes(fileA)] as const, ...(fileB ? [[Number(turnsB), selfTimes(fileB)] as const] : [])];
const perTurn = (run: (typeof runs)[number], place?: string) => (place ? (run[1].byPlace.get(place) ?? 0) : run[1].busy) / run[0];
const places = [...runs[0][1].byPlace.keys(), ...(runs[1]?.[1].byPlace.keys() ?? [])];
const ranked = [...new Set(places)].sort((a, b) => Math.max(...runs.map((r) => perTurn(r, b))) - Math.max(...runs.map((r) => perTurn(r, a))));
const cell = (run: (typeof runs)[number], place?: string) =>
  `${perTurn(run, place).toFixed(0).padStart(6)} µs ${((100 * perTurn(run, place)) / perTurn(run)).toFixed(1).padStart(5)} %`;
console.log(`| where | ${runs.map((_, i) => (i === 0 ? (fileB ? 'before' : 'µs per turn, share') : 'after')).join(' | ')} |`);
console.log(`|---|${runs.map(() => '---:').join('|')}|`);
console.log(`| **busy, all of it** | ${runs.map((r) => cell(r)).join(' | ')} |`);
for (const place of ranked.slice(0, Number(process.env.TOP ?? 25))) console.log(`| ${place} | ${runs.map((r) => cell(r, place)).join(' | ')} |`);
