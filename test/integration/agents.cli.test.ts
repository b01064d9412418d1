// Issue 35 part 1: `parley agents add` creates an account and prints a one-time set-password link; it writes to the
// store itself when Parley is not running, and asks the running Parley when the store is held (LMDB). A real child
// process of the CLI, a real Parley.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { startParley, tempDir, testConfig, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { onTestEngine } from '../support/test-engine.ts';
import { PASSWORD, post, signIn } from '../support/agents.ts';

const open: TestParley[] = [];
afterEach(async () => {
  for (const p of open.splice(0).reverse()) await p.close();
});

async function cli(storagePath: string, port: number, args: string[]) {
  const input = await onTestEngine(testConfig({ server: { port } }, storagePath), storagePath);
  const configPath = join(storagePath, 'cli-config.yaml');
  writeFileSync(configPath, stringify(input));
  const child = trackChild(
    spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'src/main.ts'), 'agents', ...args, '--config', configPath], {
      cwd: PROJECT_ROOT,
      env: Object.assign({}, process.env, { SERVICE_SDK_SECRET: TEST_SECRET }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d.toString()));
  child.stderr.on('data', (d) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

const tokenIn = (stdout: string) => /\/agents\/set-password\?token=(pl_[A-Za-z0-9_-]+)/.exec(stdout)?.[1];

describe('parley agents add', () => {
  it('with Parley stopped: creates the account in the store and prints a link that sets the password once', async () => {
    const storagePath = tempDir();
    const r = await cli(storagePath, 0, ['add', '--email', 'root@example.com', '--name', 'Root', '--role', 'admin']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Created admin root@example.com \(ag_[0-9a-f-]+\)\.\n/);
    const token = tokenIn(r.stdout);
    expect(token).toBeDefined();
    const p = await startParley({ storagePath });
    open.push(p);
    expect((await post(p, '/api/v1/agents/set-password', { token, password: PASSWORD })).status).toBe(200);
    expect((await post(p, '/api/v1/agents/set-password', { token, password: PASSWORD })).status).toBe(410);
    expect((await signIn(p, 'root@example.com')).status).toBe(200);
  });

  it('with Parley running: the account is made (through the running Parley when it holds the store); bad arguments exit 64', async () => {
    const storagePath = tempDir();
    const p = await startParley({ storagePath });
    open.push(p);
    const port = Number(new URL(p.url()).port);
    const r = await cli(storagePath, port, ['add', '--email', 'ann@example.com', '--name', 'Ann']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Created agent ann@example.com/);
    expect((await post(p, '/api/v1/agents/set-password', { token: tokenIn(r.stdout), password: PASSWORD })).status).toBe(200);
    expect((await signIn(p, 'ann@example.com')).status).toBe(200);
    const again = await cli(storagePath, port, ['add', '--email', 'ANN@example.com', '--name', 'Ann']);
    expect(again.code).toBe(64);
    expect(again.stderr).toMatch(/exists already|another account has this email/i);
    const bad = await cli(storagePath, port, ['add', '--email', 'not-an-email', '--name', 'X']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('email');
    // A flag left out is named as a flag (it read "name: Invalid input: expected string, received undefined").
    const noName = await cli(storagePath, port, ['add', '--email', 'bo@example.com']);
    expect(noName.code).toBe(64);
    expect(noName.stderr).toMatch(/^parley agents: --name is needed\n/);
    const neither = await cli(storagePath, port, ['add']);
    expect(neither.stderr).toMatch(/^parley agents: --email and --name are needed\n/);
  });
});
