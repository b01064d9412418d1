// `npx parley …` runs the checkout's own command (package.json `bin`), as the README and the issues promise.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('npx parley', () => {
  it('runs src/main.ts: its help names every verb', () => {
    const run = spawnSync('npx', ['--offline', '--no-install', 'parley', '--help'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('Usage: parley');
    for (const verb of ['migrate-store', 'knowledge import', 'parley test']) expect(run.stdout).toContain(verb);
    // npx and tsx start slowly on a busy machine (30 s seen at load 17): the test waits as long as the spawn may.
  }, 150_000);
});
