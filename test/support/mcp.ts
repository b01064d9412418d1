// MCP servers for integration tests: the fixture server of test/fixtures/mcp-server.ts over stdio (with its call log),
// and @modelcontextprotocol/server-everything over stdio or Streamable HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { trackChild } from './child-processes.ts';
import { tempDir } from './tmp.ts';

export const FIXTURE_SERVER = join(PROJECT_ROOT, 'test/fixtures/mcp-server.ts');
export const EVERYTHING = join(PROJECT_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** The fixture as a `tools.mcp` entry; `calls()` reads its call log. */
export function fixtureServer(id: string, extra: Record<string, unknown> = {}) {
  const log = join(tempDir(), 'calls.jsonl');
  const config = Object.assign(
    { id, command: process.execPath, args: ['--import', 'tsx', FIXTURE_SERVER], cwd: PROJECT_ROOT, env: { MCP_FIXTURE_LOG: log, FIXTURE_GREETING: 'hello' } },
    extra,
  );
  const lines = (): Record<string, any>[] =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  return {
    config,
    lines,
    calls: () => lines().filter((l) => l.tool),
    starts: () => lines().filter((l) => l.started),
  };
}

/** Polls `check` until it returns a truthy value (generous deadline: the machine is busy). */
export async function until<T>(check: () => T | Promise<T>, what: string, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** server-everything over Streamable HTTP on `port` (at /mcp); resolves once it listens. */
export async function startEverythingHttp(port: number): Promise<{ url: string; child: ChildProcess; close(): Promise<void> }> {
  const child = trackChild(
    spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
      env: Object.assign({}, process.env, { PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await until(() => out.includes('listening on port') || child.exitCode !== null, 'server-everything to listen');
  if (child.exitCode !== null) throw new Error(`server-everything exited: ${out}`);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    async close() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
