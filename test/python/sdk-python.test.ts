// The Python SDK (sdk-python/) inside `npm test`: its pytest suite — which starts real Parley processes from this
// checkout and drives customer turns over the widget's socket — and `mypy --strict`, both from the virtual
// environment scripts/ensure-python.sh makes (npm's pretest). Outside test/integration on purpose: the Python tests
// run Parley on LMDB themselves, so the PostgreSQL project would only repeat them.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';

const ROOT = join(import.meta.dirname, '../..');
const SDK = join(ROOT, 'sdk-python');
const PYTHON = join(SDK, '.venv/bin/python');

/** Runs the venv's python; killed after `timeoutMs` (its Parley servers die with it: see tests/parley_server.py). */
function run(args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' };
    delete env.PARLEY_TEST_ENGINE;
    const child = trackChild(spawn(PYTHON, args, { cwd: SDK, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' }));
    let output = '';
    child.stdout.on('data', (d) => (output += d.toString()));
    child.stderr.on('data', (d) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the Python SDK', () => {
  it('has its virtual environment (bash scripts/ensure-python.sh makes it)', () => {
    expect(existsSync(PYTHON), `${PYTHON} is missing: run bash scripts/ensure-python.sh`).toBe(true);
  });

  it('passes its pytest suite against real Parley servers', { timeout: 900_000 }, async () => {
    const { code, output } = await run(['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], 840_000);
    expect(code, output).toBe(0);
    expect(output).toMatch(/\d+ passed/);
    expect(output).not.toMatch(/skipped|xfail/);
  });

  it('is clean under mypy --strict', { timeout: 600_000 }, async () => {
    const { code, output } = await run(['-m', 'mypy'], 540_000);
    expect(code, output).toBe(0);
    expect(output).toMatch(/Success: no issues found/);
  });
});
