// `parley test --url`: the real CLI (a child process) tests a Parley that is already running. In test mode
// (SERVICE_TEST_MODE=1) the runner reads the tool calls with their arguments and calls the backend's test function
// through the test-mode routes (behind the service secret), so the demo suite passes, and a broken backend fails
// exactly the scenarios it breaks with the same diffs as an embedded run. Outside test mode those routes do not exist:
// the runner sees tool names only, and a backend check says why it cannot be made.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startParley, TEST_SECRET } from '../support/parley.ts';
import { runParleyCli } from '../support/cli.ts';

interface Report {
  totals: Record<string, number>;
  scenarios: { name: string; status: string; runs: { differences: { step: number | string; expected: string; happened: string }[] }[] }[];
}

/** `parley test ...args`, with the variables of this environment that would configure it (or the backend) cleared. */
const parleyTest = (args: string[], env: Record<string, string> = {}) =>
  runParleyCli(['test', ...args], { SERVICE_CONFIG: '', SERVICE_SDK_SECRET: '', DEMO_FAULTS: '', ...env });

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function running(testMode: boolean) {
  const parley = await startParley({ testMode });
  started.push(parley);
  return parley;
}

const SUITE = 'examples/scenarios';
const byName = (r: Report) => new Map(r.scenarios.map((s) => [s.name, s]));

describe('parley test --url (a running Parley)', { timeout: 180_000 }, () => {
  it('in test mode: the demo suite passes, with tool arguments and backend checks', async () => {
    const parley = await running(true);
    const r = await parleyTest([SUITE, '--url', parley.url(), '--secret', TEST_SECRET, '--reporter', 'json']);
    expect(r.err).toBe('');
    const report = JSON.parse(r.out) as Report;
    expect(report.scenarios.flatMap((s) => s.runs.flatMap((run) => run.differences))).toEqual([]);
    // WhatsApp is driven through an embedded Parley only: that scenario is skipped, with the reason.
    expect(report.totals).toEqual({ passed: 5, failed: 0, skipped: 1, total: 6 });
    expect(report.scenarios.find((s) => s.status === 'skipped')!.name).toBe('on WhatsApp, cancelling asks with Yes/No buttons first');
    expect(r.code).toBe(0);
  });

  it('in test mode: a broken backend fails exactly the scenarios it breaks, naming the arguments and the backend state', async () => {
    const parley = await running(true);
    const r = await parleyTest([SUITE, '--url', parley.url(), '--reporter', 'json'], {
      DEMO_FAULTS: 'cancel-noop,rename-status',
      SERVICE_SDK_SECRET: TEST_SECRET,
    });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as Report;
    expect(
      report.scenarios
        .filter((s) => s.status === 'failed')
        .map((s) => s.name)
        .sort(),
    ).toEqual(['cancelling an order asks first, then cancels', 'order status is looked up and told']);
    const scenarios = byName(report);
    // The arguments of a call that needed no confirmation: only the test-mode route shows them.
    expect(scenarios.get('order status is looked up and told')!.runs[0].differences).toEqual([
      { step: 2, expected: 'tool getOrderStatus with args ⊇ {"orderId":"1002"}', happened: 'lookupOrder({"orderId":"1002"})' },
    ]);
    const cancel = scenarios.get('cancelling an order asks first, then cancels')!.runs[0].differences;
    expect(cancel.map((d) => d.expected)).toEqual(['backend orderStateForTests({"orderId":"1001"}) ⊇ {"status":"cancelled"}']);
    expect(cancel[0].happened).toContain('"status":"processing"');
  });

  it('outside test mode: tool names only, and a backend check says it cannot be made', async () => {
    const parley = await running(false);
    const r = await parleyTest(
      [
        join(SUITE, 'order-status.scenario.yaml'),
        join(SUITE, 'cancel-approved.scenario.yaml'),
        '--url',
        parley.url(),
        '--secret',
        TEST_SECRET,
        '--reporter',
        'json',
      ],
      { DEMO_FAULTS: 'rename-status' },
    );
    expect(r.code).toBe(1);
    const scenarios = byName(JSON.parse(r.out) as Report);
    expect(scenarios.get('order status is looked up and told')!.runs[0].differences).toEqual([
      { step: 2, expected: 'tool getOrderStatus with args ⊇ {"orderId":"1002"}', happened: 'lookupOrder(…)' },
    ]);
    // The confirmed call's arguments come from its confirmation card; the backend state cannot be read.
    expect(scenarios.get('cancelling an order asks first, then cancels')!.runs[0].differences).toEqual([
      {
        step: 4,
        expected: 'backend orderStateForTests',
        happened: 'no test path to the backend (an embedded Parley, or a running one in test mode, has one)',
      },
    ]);
  });
});

describe('the test-mode routes of parley test', () => {
  it('need the service secret, check their input, and exist only in test mode', async () => {
    const parley = await running(true);
    const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
    const calls = `${parley.url()}/__test__/conversations/conv_x/tool-calls`;
    expect((await fetch(calls)).status).toBe(401);
    expect((await fetch(calls, { headers: { authorization: 'Bearer wrong-secret-0123456789' } })).status).toBe(401);
    expect(await (await fetch(calls, { headers: auth })).json()).toEqual({ items: [] });
    const invoke = (body: string, headers: Record<string, string> = auth) => fetch(`${parley.url()}/__test__/sdk/invoke`, { method: 'POST', headers, body });
    expect((await invoke('{"name":"x"}', { 'content-type': 'application/json' })).status).toBe(401);
    const bad = await invoke('{"name":"","extra":1}');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    expect(await (await invoke('{"name":"nothingConnected"}')).json()).toEqual({ ok: false, error: expect.stringMatching(/^unknown_function: /) });

    const production = await running(false);
    const none = await fetch(`${production.url()}/__test__/conversations/conv_x/tool-calls`, { headers: auth });
    expect(none.status).toBe(404);
    expect((await fetch(`${production.url()}/__test__/sdk/invoke`, { method: 'POST', headers: auth, body: '{"name":"x"}' })).status).toBe(404);
  });
});
