// The τ²-bench bridge (examples/tau2-bridge/tau2_bridge.py) without τ², Parley or a network: its dry run turns a
// domain's tool schemas into the functions Parley would be offered (reads at once, changes behind a confirmation),
// counts the conversations, refuses a k larger than the trials, says how to install τ² when it is missing, and its
// pass^k is τ-bench's formula (C(successes, k) / C(trials, k), averaged over the tasks).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';

const DIR = join(PROJECT_ROOT, 'examples/tau2-bridge');
const python = (args: string[]) =>
  spawnSync('python3', args, { cwd: DIR, encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, timeout: 60_000 });

describe('the τ²-bench bridge (dry run)', () => {
  it('plans the functions with their modes, the tasks and the trials', () => {
    const r = python(['tau2_bridge.py', '--dry-run', '--domain-file', 'domain.sample.json', '--trials', '4', '--tasks', '2', '--k', '1', '4']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      domain: 'retail',
      functions: [
        { name: 'get_order_details', mode: 'read', parameters: ['order_id'] },
        { name: 'cancel_pending_order', mode: 'write', parameters: ['order_id', 'reason'] },
        { name: 'find_user_id_by_email', mode: 'read', parameters: ['email'] },
      ],
      tasks: ['0', '1'],
      trials: 4,
      conversations: 8,
    });
  });

  it('refuses a k above the trials, and names the install when τ² is missing', () => {
    const k = python(['tau2_bridge.py', '--dry-run', '--domain-file', 'domain.sample.json', '--trials', '2', '--k', '3']);
    expect(k.status).toBe(2);
    expect(k.stderr).toContain('each --k is between 1 and --trials');
    const missing = python(['-c', 'import sys; sys.modules["tau2"] = None; import tau2_bridge; tau2_bridge.main(["--dry-run"])']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('τ²-bench is not installed');
    expect(missing.stderr).toContain('pip install "tau2 @ git+https://github.com/sierra-research/tau2-bench"');
  });

  it('computes pass^k as τ-bench does', () => {
    const r = python([
      '-c',
      [
        'import json, tau2_bridge as b',
        "runs = {'a': [True, True, False, True], 'b': [True] * 4, 'c': [False] * 4}",
        'print(json.dumps([b.pass_hat_k(runs, k) for k in (1, 2, 4)]))',
      ].join('\n'),
    ]);
    expect(r.stderr).toBe('');
    // a: 3 of 4 → 3/4, C(3,2)/C(4,2) = 1/2, 0; b: 1, 1, 1; c: 0, 0, 0.
    const [one, two, four] = JSON.parse(r.stdout) as number[];
    expect(one).toBeCloseTo((0.75 + 1 + 0) / 3, 10);
    expect(two).toBeCloseTo((0.5 + 1 + 0) / 3, 10);
    expect(four).toBeCloseTo((0 + 1 + 0) / 3, 10);
  });
});
