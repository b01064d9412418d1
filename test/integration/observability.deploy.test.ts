// Issue 39 part 5: the ecosystem's own tools. deploy/prometheus/alerts.yml passes `promtool check rules` and its unit
// tests (`promtool test rules`); every Grafana query in deploy/grafana/parley.json is valid PromQL; and every metric
// name the dashboard and the rules use is one a real Parley's /metrics exports.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { findProjectRoot } from '../../src/project-root.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { parsePrometheusText } from '../support/prom-text.ts';

const run = promisify(execFile);
const PROJECT_ROOT = findProjectRoot(import.meta.dirname);
// scripts/ensure-promtool.sh (npm's pretest) installs it, or stops with the command to type.
const PROMTOOL = process.env.PARLEY_PROMTOOL ?? '/usr/bin/promtool';
const ALERTS = join(PROJECT_ROOT, 'deploy/prometheus/alerts.yml');
const ALERT_TESTS = join(PROJECT_ROOT, 'deploy/prometheus/alerts.test.yml');
const GRAFANA = join(PROJECT_ROOT, 'deploy/grafana/parley.json');
/** Series Prometheus makes itself, not Parley. */
const PROMETHEUS_OWN = new Set(['up']);

const promtool = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { timeout: 60_000 });
    return { ok: true, out: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
};

/** Every `expr` in the dashboard (panels, rows' panels), with Grafana's variables given values PromQL accepts. */
function grafanaQueries(): string[] {
  const dash = JSON.parse(readFileSync(GRAFANA, 'utf8'));
  const out: string[] = [];
  const walk = (panels: any[]) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) if (typeof t.expr === 'string') out.push(t.expr);
      walk(p.panels);
    }
  };
  walk(dash.panels);
  for (const v of dash.templating?.list ?? []) {
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    const m = typeof q === 'string' ? /^label_values\(([a-zA-Z_:][\w:]*)\s*,/.exec(q) : null;
    if (m) out.push(m[1]);
  }
  return out.map((e) => e.replaceAll('$__rate_interval', '5m').replaceAll('$instance', '.*'));
}

function alertQueries(): string[] {
  const doc = parse(readFileSync(ALERTS, 'utf8'));
  return doc.groups.flatMap((g: any) => g.rules.map((r: any) => String(r.expr)));
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression reads: identifiers outside label matchers, ranges, strings and grouping lists, not called as functions. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = bare.match(/(?<![\w.:$])[a-zA-Z_:][\w:]*(?![\w:])(?!\s*\()/g) ?? [];
  return [...new Set(names.filter((n) => !KEYWORDS.has(n.toLowerCase())))];
}

let p: TestParley;
let exported: Map<string, unknown>;
beforeAll(async () => {
  p = await startParley();
  const res = await fetch(`${p.url()}/metrics`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  exported = parsePrometheusText(await res.text());
}, 60_000);
afterAll(async () => p?.close());

/** A histogram's or summary's series name → its family. */
const familyOf = (name: string) => [name, name.replace(/_(bucket|sum|count)$/, '')].find((n) => exported.has(n));

describe('deploy/prometheus/alerts.yml', () => {
  it('passes `promtool check rules`, and its unit tests pass (`promtool test rules`)', async () => {
    const check = await promtool('check', 'rules', ALERTS);
    expect(check.out).toContain('SUCCESS');
    expect(check.ok, check.out).toBe(true);
    const tests = await promtool('test', 'rules', ALERT_TESTS);
    expect(tests.ok, tests.out).toBe(true);
  });

  it('has the alerts the operators asked for', () => {
    const names = parse(readFileSync(ALERTS, 'utf8')).groups.flatMap((g: any) => g.rules.map((r: any) => r.alert));
    for (const a of [
      'ParleyBackendDisconnected',
      'ParleyTurnErrorRateHigh',
      'ParleyHandoffWaitingPastSla',
      'ParleyWebhookDeadLetters',
      'ParleyStoreWritesFailing',
      'ParleyClusterNodeLost',
    ])
      expect(names).toContain(a);
  });
});

describe('metric names', () => {
  it('the name finder sees metrics and only metrics', () => {
    expect(metricNames('sum by (le, model) (rate(a_bucket{x="y", z=~"$i"}[5m])) / on(instance) group_left b > 0.1 and c offset 5m')).toEqual([
      'a_bucket',
      'b',
      'c',
    ]);
  });

  it("every metric the Grafana dashboard and the alert rules read is in a real Parley's /metrics", () => {
    const used = [...grafanaQueries(), ...alertQueries()].flatMap(metricNames);
    expect(used.length).toBeGreaterThan(25);
    const missing = [...new Set(used)].filter((n) => !PROMETHEUS_OWN.has(n) && !familyOf(n));
    expect(missing).toEqual([]);
  });

  it('every Grafana query is valid PromQL (promtool checks them as recording rules)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-grafana-'));
    const file = join(dir, 'queries.yml');
    const rules = grafanaQueries().map((expr, i) => ({ record: `grafana:query_${i}`, expr }));
    writeFileSync(file, JSON.stringify({ groups: [{ name: 'grafana', rules }] }));
    const check = await promtool('check', 'rules', file);
    expect(check.ok, check.out).toBe(true);
    expect(check.out).toContain(`SUCCESS: ${rules.length} rules found`);
  });
});
