// The black-box check: a scenario suite written from README.md alone (test/fixtures/readme-suite: its own
// backend from the SDK section, with a read-only `orderState` for tests) passes under the real CLI; the same suite
// against that backend broken on purpose (a cancel that does nothing, a tool renamed) fails exactly the two scenarios
// that should fail, each with a diff that names the difference, reports pass^3 with --repeat 3, and writes JUnit XML
// that parses, with one failure per failed run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.ts';
import { runParleyCli } from '../support/cli.ts';

/** `parley test ...args`, with the variables of this environment that would configure it (or the backend) cleared. */
const parleyTest = (args: string[], env: Record<string, string> = {}) => runParleyCli(['test', ...args], { SERVICE_CONFIG: '', BROKEN: '', ...env });

const SUITE = 'test/fixtures/readme-suite';
type Case = { '@_name': string; failure?: { '@_message': string; '#text': string } };

function junit(file: string): { tests: string; failures: string; cases: Case[] } {
  const text = readFileSync(file, 'utf8');
  expect(XMLValidator.validate(text)).toBe(true);
  const suite = new XMLParser({ ignoreAttributes: false }).parse(text).testsuites.testsuite;
  return { tests: suite['@_tests'], failures: suite['@_failures'], cases: [suite.testcase].flat() };
}

describe('a suite written from the README alone', { timeout: 240_000 }, () => {
  it('passes against its backend', async () => {
    const file = join(tempDir(), 'junit.xml');
    const r = await parleyTest([SUITE, '--reporter', 'junit', '--output', file]);
    expect(r.err).toBe('');
    expect(r.out).toContain('5 passed, 0 failed, 0 skipped (5 scenarios)');
    expect(r.code).toBe(0);
    const report = junit(file);
    expect([report.tests, report.failures]).toEqual(['5', '0']);
  });

  it('against the broken backend fails exactly the cancel and the renamed tool, with diffs, pass^3 and JUnit failures', async () => {
    const file = join(tempDir(), 'junit.xml');
    const r = await parleyTest([SUITE, '--repeat', '3', '--reporter', 'junit', '--output', file], { BROKEN: 'cancel-noop,rename' });
    expect(r.code).toBe(1);
    // The pretty report beside the XML: what failed, the diff of each, pass^3.
    const failed = r.out.split('\n').filter((l) => l.startsWith('✗'));
    expect(failed).toEqual([
      '✗ cancelling an order asks first  [test/fixtures/readme-suite/cancel.scenario.yaml]  (0/3 runs passed)',
      '✗ the status of an order is told  [test/fixtures/readme-suite/status.scenario.yaml]  (0/3 runs passed)',
    ]);
    expect(r.out).toContain(
      [
        '    step 4:',
        '      - expected: backend orderState({"orderId":"1001"}) ⊇ {"status":"cancelled"}',
        '      + happened: {"orderId":"1001","status":"processing"}',
      ].join('\n'),
    );
    expect(r.out).toContain(
      ['    step 2:', '      - expected: tool getOrderStatus with args ⊇ {"orderId":"1002"}', '      + happened: checkOrder({"orderId":"1002"})'].join('\n'),
    );
    expect(r.out).toContain('3 passed, 2 failed, 0 skipped (5 scenarios)');
    expect(r.out).toContain('pass^3: 3/5 scenarios passed all 3 runs');
    // JUnit: one case per run, a failure for each failed run, naming the difference.
    const report = junit(file);
    expect([report.tests, report.failures]).toEqual(['15', '6']);
    const failures = report.cases.filter((c) => c.failure);
    expect(failures.map((c) => c['@_name']).sort()).toEqual(
      [1, 2, 3].flatMap((i) => [`cancelling an order asks first (run ${i})`, `the status of an order is told (run ${i})`]).sort(),
    );
    for (const c of failures)
      expect(c.failure!['#text']).toMatch(c['@_name'].startsWith('cancelling') ? /"status":"processing"/ : /happened checkOrder\(\{"orderId":"1002"\}\)/);
  });
});
