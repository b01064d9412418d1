// @parley/sdk as an integrator's backend sees it: plain `node` (no tsx, no
// TypeScript loader) importing the package by name from its built `dist/`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { startParley, TEST_SECRET, tempDir, type TestParley } from '../support/parley.ts';

const SDK_DIR = join(PROJECT_ROOT, 'sdk');

// What `npm install` does at the root (the `prepare` script), so the test checks the current source.
beforeAll(() => {
  execFileSync(process.execPath, [join(PROJECT_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(SDK_DIR, 'tsconfig.build.json')], { stdio: 'pipe' });
}, 60_000);

const open: { close(): Promise<unknown> | unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** A backend project outside the repository with @parley/sdk in its node_modules (as `npm install` links a workspace). */
function backendProject(): string {
  const dir = tempDir('parley-backend-');
  mkdirSync(join(dir, 'node_modules/@parley'), { recursive: true });
  symlinkSync(SDK_DIR, join(dir, 'node_modules/@parley/sdk'), 'dir');
  return dir;
}

const BACKEND = `
import { createClient } from '@parley/sdk';
const parley = createClient();
parley.expose('add', { description: 'Add two numbers', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } }, ({ a, b }) => ({ sum: a + b }));
parley.expose('greet', { description: 'Greet someone', mode: 'write' }, (_args, ctx) => ({ hello: ctx.customerId }));
const { functions } = await parley.listen({ url: process.env.PARLEY_URL, secret: process.env.SERVICE_SDK_SECRET });
console.log('registered ' + functions);
process.stdin.on('end', async () => { await parley.close(); process.exit(0); });
process.stdin.resume();
`;

function runBackend(cwd: string, url: string): { child: ChildProcess; output: () => string; registered: Promise<void>; close(): Promise<void> } {
  const child = trackChild(
    spawn(process.execPath, ['--input-type=module', '-e', BACKEND], {
      cwd,
      // No tsx: NODE_OPTIONS from the test runner must not sneak a loader in.
      env: { PATH: process.env.PATH, PARLEY_URL: url, SERVICE_SDK_SECRET: TEST_SECRET },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const registered = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`backend did not register:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      if (out.includes('registered 2')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`backend exited with ${code}:\n${out}`));
    });
  });
  registered.catch(() => {});
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => out,
    registered,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin!.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

describe('@parley/sdk as a package', () => {
  it('package.json points main, types and exports at built JavaScript and declarations', () => {
    const pkg = JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8'));
    for (const target of [pkg.main, pkg.types, pkg.exports['.'].types, pkg.exports['.'].default]) expect(target).toMatch(/^\.\/dist\/.+\.(js|d\.ts)$/);
    const root = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));
    expect(root.scripts.prepare).toMatch(/build:sdk/);
  });

  it('a plain Node backend imports it, exposes two functions, listens; /ready shows 2 and calls reach it', async () => {
    const p: TestParley = await startParley();
    open.push(p);
    const backend = runBackend(backendProject(), p.url());
    open.push(backend);
    await backend.registered;

    const ready = await (await fetch(`${p.url()}/ready`)).json();
    expect(ready.checks.sdk).toEqual({ connected: true, functions: 2 });
    expect(await (await fetch(`${p.url()}/__test__/sdk/functions`)).json()).toEqual(['add', 'greet']);
    const ctx = { customerId: 'cus_9', externalId: 'ext_9', channel: 'web' as const, conversationId: 'conv_9' };
    await expect(p.runtime.hub.invoke('add', { a: 2, b: 3 }, ctx)).resolves.toEqual({ ok: true, data: { sum: 5 } });
    await expect(p.runtime.hub.invoke('greet', {}, ctx)).resolves.toEqual({ ok: true, data: { hello: 'cus_9' } });
  }, 30_000);
});
