// Finds and reads scenario files (`*.scenario.yaml`, in the paths given or below them) and the suite file
// (`parley-suite.yaml`, next to the first path). A file that does not parse is a failure to report, not a crash.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { Scenario, Suite } from './schema.ts';

export const SUITE_FILE = 'parley-suite.yaml';

export type Loaded = { file: string; scenario: Scenario } | { file: string; error: string };

function walk(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((e) => e.isDirectory() || e.name.endsWith('.scenario.yaml') || e.name.endsWith('.scenario.yml'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? walk(join(path, e.name)) : [join(path, e.name)]));
}

export function findScenarioFiles(paths: string[]): string[] {
  return [...new Set(paths.flatMap((p) => walk(resolve(p))))];
}

export function loadScenario(file: string, cwd = process.cwd()): Loaded {
  const shown = relative(cwd, file) || file;
  try {
    const parsed = Scenario.safeParse(parse(readFileSync(file, 'utf8')));
    if (parsed.success) return { file: shown, scenario: parsed.data };
    return { file: shown, error: z.prettifyError(parsed.error) };
  } catch (err) {
    return { file: shown, error: (err as Error).message };
  }
}

/** The suite file next to the first path (in it, when it is a folder); none: an empty suite. */
export function loadSuite(paths: string[]): { suite: Suite; dir: string } {
  const first = resolve(paths[0] ?? '.');
  const dir = existsSync(first) && statSync(first).isDirectory() ? first : dirname(first);
  const file = join(dir, SUITE_FILE);
  if (!existsSync(file)) return { suite: Suite.parse({}), dir };
  const parsed = Suite.safeParse(parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file}: ${z.prettifyError(parsed.error)}`);
  return { suite: parsed.data, dir };
}
