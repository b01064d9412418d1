// Issue 21: the production build. `npm run build` bundles the server into dist/main.js; plain `node` runs it (no
// tsx), native lmdb stays an external package, and the built server answers /health with the package's version.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { TEST_SECRET, tempDir } from '../support/parley.ts';

const MAIN = join(PROJECT_ROOT, 'dist', 'main.js');
const VERSION = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).version;
const children: ReturnType<typeof spawn>[] = [];

beforeAll(() => {
  const r = spawnSync('npm', ['run', 'build'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}, 120_000);

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

describe('npm run build', () => {
  it('dist/main.js is our code in one ES module; packages (lmdb included) are imported, not bundled; no tsx', () => {
    const code = readFileSync(MAIN, 'utf8');
    expect(code).toMatch(/from "lmdb"/);
    expect(code).toMatch(/from "fastify"/);
    expect(code).not.toMatch(/["']tsx["']|tsx\/esm/);
    // our own modules are inside: the widget gateway and the conversation machine
    expect(code).toContain('/widget/ws');
    expect(code).toContain('awaitingConfirmation');
  });

  it('node dist/main.js --version and --help answer without starting', () => {
    const version = spawnSync(process.execPath, [MAIN, '--version'], { encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
    const help = spawnSync(process.execPath, [MAIN, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: parley/);
    expect(help.stdout).toContain('--config');
    const bad = spawnSync(process.execPath, [MAIN, '--nope'], { encoding: 'utf8' });
    expect(bad.status).toBe(64);
    expect(bad.stderr).toContain("Unknown option '--nope'");
  });

  it('the built server starts with plain node, serves /health and the compressed widget, and logs JSON when stdout is not a terminal', async () => {
    const dir = tempDir();
    const configPath = join(dir, 'parley.yaml');
    writeFileSync(
      configPath,
      `server: {host: 127.0.0.1, port: 0}\nstorage: {path: ${join(dir, 'data')}}\nsecret: ${TEST_SECRET}\nlogging: {level: info}\ndemo: {backend: true}\n`,
    );
    const child = spawn(process.execPath, [MAIN, '--config', configPath], { cwd: dir, env: Object.assign({}, process.env, { LOG_FORMAT: '' }) });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start line in 20 s:\n${stderr}`)), 20_000);
      child.stderr.on('data', () => {
        const m = /Parley is running at (http:\/\/\S+)/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}:\n${stderr}`)));
    });
    const health = await (await fetch(`${url}/health`)).json();
    expect(health).toEqual({ status: 'ok', version: VERSION });
    const widget = await fetch(`${url}/widget.js`, { headers: { 'accept-encoding': 'br' } });
    expect(widget.headers.get('content-encoding')).toBe('br');
    // the in-process demo backend (bundled too) registers through the real SDK
    await expect.poll(async () => (await (await fetch(`${url}/ready`)).json()).checks?.sdk?.functions, { timeout: 10_000 }).toBe(2);
    const lines = stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(lines.map((l) => JSON.parse(l).msg)).toContain('parley listening');
    child.kill('SIGTERM');
    expect(await new Promise((r) => child.on('exit', r))).toBe(0);
  });
});
