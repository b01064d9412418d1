// `parley test` as an integrator runs it: the real CLI (a child process) starts an embedded Parley with the project's
// configuration on a fresh LMDB store, starts the demo backend from examples/scenarios/parley-suite.yaml through the
// real SDK, and drives each scenario over the widget protocol. The same suite against the demo backend broken on
// purpose fails exactly the scenarios that should fail, each with a diff naming the difference.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { tempDir } from '../support/tmp.ts';
import { runParleyCli } from '../support/cli.ts';
import { startParley, testConfig, type TestParley } from '../support/parley.ts';

const open: TestParley[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
});

/** `parley test ...args`, with the variables of this environment that would configure it (or the backend) cleared. */
const parleyTest = (args: string[], env: Record<string, string> = {}) => runParleyCli(['test', ...args], { SERVICE_CONFIG: '', DEMO_FAULTS: '', ...env });

const SUITE = 'examples/scenarios';

describe('parley test on the demo backend’s suite', { timeout: 180_000 }, () => {
  it('passes every scenario, and writes valid JUnit XML', async () => {
    const file = join(tempDir(), 'junit.xml');
    const r = await parleyTest([SUITE, '--reporter', 'junit', '--output', file]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/6 passed, 0 failed, 0 skipped \(6 scenarios\)/);
    const xml = readFileSync(file, 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false }).parse(xml);
    const suite = doc.testsuites.testsuite;
    expect(suite['@_tests']).toBe('6');
    expect(suite['@_failures']).toBe('0');
    expect(suite.testcase.map((c: Record<string, string>) => c['@_name']).sort()).toEqual([
      'a cancel the backend refuses is explained',
      'a customer who asks for a person gets one',
      'a declined cancel changes nothing',
      'cancelling an order asks first, then cancels',
      'on WhatsApp, cancelling asks with Yes/No buttons first',
      'order status is looked up and told',
    ]);
  });

  it('against a broken backend fails exactly the scenarios it breaks, with a diff naming each difference; --repeat 3 reports pass^3', async () => {
    const r = await parleyTest([SUITE, '--repeat', '3', '--reporter', 'json'], { DEMO_FAULTS: 'cancel-noop,rename-status' });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as {
      repeat: number;
      totals: Record<string, number>;
      scenarios: { name: string; status: string; passes: number; runs: { differences: { step: number | string; expected: string; happened: string }[] }[] }[];
    };
    expect(report.repeat).toBe(3);
    const byName = new Map(report.scenarios.map((s) => [s.name, s]));
    const failed = report.scenarios.filter((s) => s.status === 'failed').map((s) => s.name);
    expect(failed.sort()).toEqual([
      'cancelling an order asks first, then cancels',
      'on WhatsApp, cancelling asks with Yes/No buttons first',
      'order status is looked up and told',
    ]);
    for (const s of report.scenarios) expect(s.passes).toBe(s.status === 'passed' ? 3 : 0);
    // The renamed tool: the diff names what was expected and what was called instead.
    expect(byName.get('order status is looked up and told')!.runs[0].differences).toEqual([
      { step: 2, expected: 'tool getOrderStatus with args ⊇ {"orderId":"1002"}', happened: 'lookupOrder({"orderId":"1002"})' },
    ]);
    // The cancel that does nothing: the assistant says cancelled, the backend's own state says otherwise.
    const cancel = byName.get('cancelling an order asks first, then cancels')!.runs[0].differences;
    expect(cancel).toHaveLength(1);
    expect(cancel[0].step).toBe(4);
    expect(cancel[0].expected).toBe('backend orderStateForTests({"orderId":"1001"}) ⊇ {"status":"cancelled"}');
    expect(cancel[0].happened).toContain('"status":"processing"');
  });

  it('prints a readable diff and pass^k in the pretty report', async () => {
    const r = await parleyTest([join(SUITE, 'order-status.scenario.yaml'), '--repeat', '3'], { DEMO_FAULTS: 'rename-status' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('✗ order status is looked up and told');
    expect(r.out).toContain('- expected: tool getOrderStatus with args ⊇ {"orderId":"1002"}');
    expect(r.out).toContain('+ happened: lookupOrder({"orderId":"1002"})');
    expect(r.out).toContain('0 passed, 1 failed, 0 skipped (1 scenario)\n');
    expect(r.out).toContain('pass^3: 0/1 scenarios passed all 3 runs');
  });

  it('refuses bad usage with exit code 64, and reports an invalid scenario file as a failure', async () => {
    expect((await parleyTest([SUITE, '--repeat', '0'])).code).toBe(64);
    expect((await parleyTest([SUITE, '--reporter', 'tap'])).code).toBe(64);
    expect((await parleyTest([tempDir()])).code).toBe(64);
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.scenario.yaml'), 'name: no customer\nsteps:\n  - customer: hi\n');
    const bad = await parleyTest([dir]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('- expected: a valid scenario file');
    expect(bad.out).toMatch(/\+ happened: [^\n]*expected object[^\n]*\n {18,}→ at customer/);
  });

  it('a folder that is not there, or a store a running Parley holds: one line saying what to do, no stack', async () => {
    // `npx parley test` with no path where there is no scenarios/ folder (the project root has none)
    const none = await parleyTest([]);
    expect(none.code).toBe(64);
    expect(none.err).toBe(
      'parley test: no scenarios/ folder here (the default); name your scenario files or folders, e.g. npx parley test examples/scenarios\n',
    );
    const typo = await parleyTest(['example/scenarios']);
    expect(typo.code).toBe(64);
    expect(typo.err).toMatch(/^parley test: example\/scenarios: no such file or folder; name your scenario files or folders/);

    // `parley test export` while Parley runs on the same LMDB store
    const running = await startParley();
    open.push(running);
    const configPath = join(tempDir(), 'profile.yaml');
    writeFileSync(configPath, stringify(testConfig({}, running.storagePath)));
    const held = await parleyTest(['export', 'conv_web_c-1'], { SERVICE_CONFIG: configPath });
    expect(held.code).toBe(1);
    expect(held.err.trim().split('\n')).toHaveLength(1);
    expect(held.err).toMatch(/^parley test export: storage\.path .* is in use by another Parley process .*; or export from the running Parley/);
    expect(held.err).toContain('GET /api/v1/conversations/conv_web_c-1/scenario');
  });
});
