// Issue 15 parts 6 and 9, through the real entry point (src/main.ts) and the real profiles in config/:
// settings that cannot work stop start-up with one line that names the cause, and the WhatsApp channel
// turns on by itself when its four credentials are in the environment.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createParley } from '../../src/app.ts';
import { loadConfig, PROJECT_ROOT } from '../../src/config/load.ts';
import { createLogger } from '../../src/logger.ts';
import { tempDir } from '../support/tmp.ts';

// Each test starts real processes (tsx compiles src/ on the way): give them time on a loaded machine.
vi.setConfig({ testTimeout: 90_000 });

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** Runs `npm start`'s entry point with this environment (nothing inherited but PATH and HOME); its exit code and stderr. */
function start(env: Record<string, string>) {
  // tsx by absolute path: the working directory is a temporary one, where relative storage paths land.
  const r = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href, join(PROJECT_ROOT, 'src/main.ts')],
    {
      cwd: tempDir(),
      env: Object.assign({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, env),
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  return { status: r.status, signal: r.signal, stderr: String(r.stderr), lines: String(r.stderr).trim().split('\n') };
}

function profile(dir: string, body: string): string {
  const file = join(dir, 'profile.yaml');
  writeFileSync(file, `server:\n  port: 0\ndemo:\n  backend: false\nlogging:\n  level: silent\n${body}`);
  return file;
}

describe('start-up refusals (the real process)', () => {
  it('a service secret shorter than 16 characters: exit 78, one line naming `secret`', () => {
    const dir = tempDir();
    const r = start({ SERVICE_CONFIG: profile(dir, `storage:\n  path: ${dir}/data\n`), SERVICE_SDK_SECRET: 'fifteen-chars!!' });
    expect(r.status).toBe(78);
    expect(r.lines).toEqual(['parley: configuration error: secret: the service secret must be at least 16 characters (or empty to have one generated)']);
  });

  it('the shipped openai profile without OPENAI_API_KEY and OPENAI_BASE_URL: exit 78, one line naming llm.api_key', () => {
    const r = start({ SERVICE_CONFIG: 'openai', SERVICE_SDK_SECRET: 'a-good-long-secret-0123' });
    expect(r.status).toBe(78);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^parley: configuration error: llm\.api_key: provider "openai" needs api_key/);
  });

  it('a read-only storage.path is reported as read-only, not as ENOENT', () => {
    const runs: { name: string; path: string; expected: RegExp; cleanup?: () => void }[] = [];
    const root = process.getuid?.() === 0;
    // A really read-only file system: a small tmpfs mounted read-only (only root may mount).
    if (root) {
      const mnt = tempDir();
      if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', mnt]).status === 0) {
        runs.push({
          name: 'read-only tmpfs',
          path: join(mnt, 'data'),
          expected: /is on a read-only file system/,
          cleanup: () => void spawnSync('umount', [mnt]),
        });
      }
    }
    // A directory without write permission, for a user who is not root (root writes anyway).
    if (!root) {
      const locked = tempDir();
      mkdirSync(join(locked, 'data'));
      chmodSync(join(locked, 'data'), 0o555);
      runs.push({ name: 'directory mode 555', path: join(locked, 'data'), expected: /is read-only for this user \(uid \d+\)/ });
    }
    expect(runs.length, 'no read-only directory can be made here: run as a user other than root, or as root allowed to mount').toBeGreaterThan(0);
    try {
      for (const run of runs) {
        const dir = tempDir();
        const r = start({ SERVICE_CONFIG: profile(dir, `storage:\n  path: ${run.path}\n`), SERVICE_SDK_SECRET: 'a-good-long-secret-0123' });
        expect(r.status, `${run.name}: ${r.stderr}`).toBe(1);
        expect(r.lines, `${run.name}: ${r.stderr}`).toHaveLength(1);
        expect(r.lines[0], run.name).toMatch(new RegExp(`^parley: cannot start: storage\\.path ${run.path}`));
        expect(r.lines[0], run.name).toMatch(run.expected);
        expect(r.stderr, run.name).not.toMatch(/ENOENT|no such file/);
      }
    } finally {
      for (const run of runs) run.cleanup?.();
    }
  });
});

describe('the WhatsApp channel in a shipped profile', () => {
  const credentials = {
    WA_PHONE_ID: '106540352242922',
    WA_TOKEN: 'EAAG-token-0123456789',
    WA_VERIFY_TOKEN: 'verify-0123',
    WA_APP_SECRET: 'app-secret-0123456789',
  };
  async function parleyWith(env: Record<string, string>) {
    const { config } = loadConfig(Object.assign({ SERVICE_CONFIG: 'proactive', SERVICE_SDK_SECRET: 'a-good-long-secret-0123' }, env), tempDir());
    config.server.port = 0;
    config.storage.path = tempDir();
    const p = await createParley({ config, testMode: false, logger: createLogger('silent') });
    open.push({ close: () => p.stop() });
    return p.start();
  }
  const challenge = (url: string) => fetch(`${url}/wa/webhook?hub.mode=subscribe&hub.verify_token=${credentials.WA_VERIFY_TOKEN}&hub.challenge=4242`);

  it('is served when the four credentials are set; not with WA_ENABLED=false, nor without them', async () => {
    const on = await challenge(await parleyWith(credentials));
    expect(on.status).toBe(200);
    expect(await on.text()).toBe('4242');
    expect((await challenge(await parleyWith(Object.assign({ WA_ENABLED: 'false' }, credentials)))).status).toBe(404);
    expect((await challenge(await parleyWith({}))).status).toBe(404);
  });
});
