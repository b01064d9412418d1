// `parley test [paths] [--repeat k] [--reporter pretty|junit|json] [--output file] [--url URL] [--secret S]` and
// `parley test export <conversationId> [--out file]`. Exit code 0 when every scenario passed (skipped ones do not
// fail a run), 1 when one failed, 64 for bad usage.
import { existsSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { TestIo } from './io.ts';
import { startBackend, startEmbedded, runningParley, type Harness } from './embedded.ts';
import { createScenarioModel } from './model.ts';
import { findScenarioFiles, loadScenario, loadSuite } from './loader.ts';
import { report, totals, type ReporterName, type ScenarioSummary } from './reporters.ts';
import { runScenario, type ScenarioResult } from './runner.ts';

export const TEST_HELP = `Usage: parley test [paths…] [--repeat k] [--reporter pretty|junit|json] [--output file] [--url URL --secret S]
       parley test export <conversationId> [--output file]

Runs the conversation scenarios (*.scenario.yaml) found in the paths (default: scenarios/) against an embedded Parley
with this project's configuration and a fresh store, or a running one (--url, with its service secret in --secret or
SERVICE_SDK_SECRET). The backend starts from parley-suite.yaml (backend.command) or is awaited until it connects.
README.md, "Testing your conversations".`;

async function runAll(paths: string[], repeat: number, harness: Harness): Promise<ScenarioSummary[]> {
  const loaded = findScenarioFiles(paths).map((f) => loadScenario(f));
  return Promise.all(
    loaded.map(async (l): Promise<ScenarioSummary> => {
      if ('error' in l) {
        const bad: ScenarioResult = {
          name: l.file,
          file: l.file,
          status: 'failed',
          differences: [{ step: 'end', expected: 'a valid scenario file', happened: l.error }],
          durationMs: 0,
        };
        return { name: l.file, file: l.file, runs: [bad] };
      }
      const runs: ScenarioResult[] = [];
      // Each run is a new customer (its own conversation): runs of one scenario go one after the other.
      for (let i = 0; i < repeat; i++) {
        const s =
          repeat > 1
            ? Object.assign({}, l.scenario, {
                customer: Object.assign({}, l.scenario.customer, { externalId: `${l.scenario.customer.externalId}-run${i + 1}` }),
              })
            : l.scenario;
        runs.push(await runScenario(s, l.file, harness.target));
      }
      return { name: l.scenario.name, file: l.file, runs };
    }),
  );
}

export async function parleyTest(argv: string[], io: TestIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        repeat: { type: 'string', default: '1' },
        reporter: { type: 'string', default: 'pretty' },
        output: { type: 'string', short: 'o' },
        url: { type: 'string' },
        secret: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    io.err(`parley test: ${(err as Error).message}\n\n${TEST_HELP}\n`);
    return 64;
  }
  const { values, positionals } = parsed;
  if (values.help) return (io.out(`${TEST_HELP}\n`), 0);
  if (positionals[0] === 'export') {
    const { exportCommand } = await import('./export.ts');
    return exportCommand(positionals.slice(1), values.output, io);
  }
  const repeat = Number(values.repeat);
  const reporter = values.reporter as ReporterName;
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > 100) return (io.err('parley test: --repeat takes a whole number from 1 to 100\n'), 64);
  if (!['pretty', 'junit', 'json'].includes(reporter)) return (io.err('parley test: --reporter is pretty, junit or json\n'), 64);
  const paths = positionals.length ? positionals : ['scenarios'];
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length) {
    const what = positionals.length ? `${missing.join(', ')}: no such file or folder` : 'no scenarios/ folder here (the default)';
    return (io.err(`parley test: ${what}; name your scenario files or folders, e.g. npx parley test examples/scenarios\n`), 64);
  }
  let harness: Harness | undefined;
  let backend: { stop(): Promise<void> } | undefined;
  try {
    if (findScenarioFiles(paths).length === 0) return (io.err(`parley test: no *.scenario.yaml in ${paths.join(', ')}\n`), 64);
    const { suite, dir } = loadSuite(paths);
    const secret = values.secret ?? process.env.SERVICE_SDK_SECRET;
    if (values.url && !secret) return (io.err('parley test: --url needs the service secret (--secret or SERVICE_SDK_SECRET)\n'), 64);
    const whatsapp = findScenarioFiles(paths).some((f) => {
      const l = loadScenario(f);
      return 'scenario' in l && l.scenario.customer.channel === 'whatsapp';
    });
    harness = values.url ? await runningParley(values.url, secret!) : await startEmbedded(io.loadConfig(), suite, { whatsapp });
    if (suite.model) harness.target.model = createScenarioModel(suite.model);
    backend = await startBackend(suite, dir, harness.target);
    const summaries = await runAll(paths, repeat, harness);
    const text = report(reporter, summaries, repeat);
    if (values.output) writeFileSync(values.output, text);
    else io.out(text);
    if (values.output && reporter !== 'pretty') io.out(report('pretty', summaries, repeat));
    return totals(summaries).failed > 0 ? 1 : 0;
  } catch (err) {
    io.err(`parley test: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await backend?.stop().catch(() => undefined);
    await harness?.stop().catch(() => undefined);
  }
}
