// The three ways a run is reported: readable text with a diff per failed scenario, JUnit XML for CI, and JSON.
import type { ScenarioResult } from './runner.ts';

export type ReporterName = 'pretty' | 'junit' | 'json';

/** One scenario over its k runs: pass^k holds when every run passed. */
export interface ScenarioSummary {
  name: string;
  file: string;
  runs: ScenarioResult[];
}

const status = (s: ScenarioSummary): ScenarioResult['status'] =>
  s.runs.some((r) => r.status === 'failed') ? 'failed' : s.runs.every((r) => r.status === 'skipped') ? 'skipped' : 'passed';

export function totals(summaries: ScenarioSummary[]) {
  const count = (st: string) => summaries.filter((s) => status(s) === st).length;
  return { passed: count('passed'), failed: count('failed'), skipped: count('skipped'), total: summaries.length };
}

const indent = (text: string) => text.replace(/\n/g, '\n                  ');

function pretty(summaries: ScenarioSummary[], repeat: number): string {
  const lines: string[] = [];
  for (const s of summaries) {
    const st = status(s);
    const passes = s.runs.filter((r) => r.status === 'passed').length;
    const k = repeat > 1 ? `  (${passes}/${s.runs.length} runs passed)` : '';
    lines.push(`${st === 'passed' ? '✓' : st === 'skipped' ? '-' : '✗'} ${s.name}  [${s.file}]${k}`);
    const skipped = s.runs.find((r) => r.status === 'skipped');
    if (st === 'skipped' && skipped) lines.push(`    skipped: ${skipped.reason}`);
    const failed = s.runs.find((r) => r.status === 'failed');
    if (failed) {
      for (const d of failed.differences) {
        lines.push(`    step ${d.step}:`);
        lines.push(`      - expected: ${indent(d.expected)}`);
        lines.push(`      + happened: ${indent(d.happened)}`);
      }
      if (failed.conversationId) lines.push(`    conversation: ${failed.conversationId}`);
    }
  }
  const t = totals(summaries);
  lines.push('', `${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped (${t.total} ${t.total === 1 ? 'scenario' : 'scenarios'})`);
  if (repeat > 1) {
    const ran = summaries.filter((s) => status(s) !== 'skipped');
    lines.push(`pass^${repeat}: ${ran.filter((s) => status(s) === 'passed').length}/${ran.length} scenarios passed all ${repeat} runs`);
  }
  return `${lines.join('\n')}\n`;
}

const xml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!).replace(/[^\t\n\r\x20-\uFFFD]/gu, '');

function junit(summaries: ScenarioSummary[]): string {
  const cases = summaries.flatMap((s) =>
    s.runs.map((r, i) => {
      const name = xml(s.runs.length > 1 ? `${s.name} (run ${i + 1})` : s.name);
      const open = `  <testcase classname="${xml(s.file)}" name="${name}" time="${(r.durationMs / 1000).toFixed(3)}"`;
      if (r.status === 'skipped') return `${open}>\n    <skipped message="${xml(r.reason ?? '')}"/>\n  </testcase>`;
      if (r.status === 'passed') return `${open}/>`;
      const body = r.differences.map((d) => `step ${d.step}: expected ${d.expected}; happened ${d.happened}`).join('\n');
      return `${open}>\n    <failure message="${xml(r.differences[0]?.expected ?? 'failed')}">${xml(body)}</failure>\n  </testcase>`;
    }),
  );
  const all = summaries.flatMap((s) => s.runs);
  const n = (st: string) => all.filter((r) => r.status === st).length;
  const time = (all.reduce((t, r) => t + r.durationMs, 0) / 1000).toFixed(3);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="${all.length}" failures="${n('failed')}" skipped="${n('skipped')}" time="${time}">\n<testsuite name="parley scenarios" tests="${all.length}" failures="${n('failed')}" errors="0" skipped="${n('skipped')}" time="${time}">\n${cases.join('\n')}\n</testsuite>\n</testsuites>\n`;
}

function json(summaries: ScenarioSummary[], repeat: number): string {
  const scenarios = summaries.map((s) => ({
    name: s.name,
    file: s.file,
    status: status(s),
    passes: s.runs.filter((r) => r.status === 'passed').length,
    runs: s.runs,
  }));
  return `${JSON.stringify({ repeat, totals: totals(summaries), scenarios }, null, 2)}\n`;
}

export function report(name: ReporterName, summaries: ScenarioSummary[], repeat: number): string {
  if (name === 'junit') return junit(summaries);
  if (name === 'json') return json(summaries, repeat);
  return pretty(summaries, repeat);
}
