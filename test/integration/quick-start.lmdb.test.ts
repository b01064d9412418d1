// The README's Quick start as a newcomer runs it: `npm start`'s entry point with no profile named (the embedded
// default: LMDB in ./data, the demo backend) on a port of their choosing (`PORT`, since 3000 is often taken), and the
// start-up lines naming every page a support team needs. A real child process, real HTTP.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { tempDir } from '../support/tmp.ts';

// Real processes that tsx compiles on the way: generous deadlines on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const TSX = pathToFileURL(join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const MAIN = join(PROJECT_ROOT, 'src/main.ts');
// Nothing inherited but PATH and HOME: no SERVICE_CONFIG, no SERVICE_SDK_SECRET, as on a fresh clone.
const bareEnv = (extra: Record<string, string>) => Object.assign({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, extra);

const children: ChildProcess[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await gone;
  }
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A port held by a listener of this test (so nothing else takes it while the test runs). */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port };
}

/** Resolves with everything written to stderr once the start-up banner is complete; rejects if the process exits first. */
function banner(child: ChildProcess): Promise<string> {
  let stderr = '';
  return new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      stderr += d;
      if (/Parley is running at[\s\S]*set SERVICE_SDK_SECRET/.test(stderr)) resolve(stderr);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before its start-up lines:\n${stderr}`)));
  });
}

describe('Quick start: npm start on a port of your choosing', () => {
  it('the default profile listens on PORT; the start-up lines name the demo, the dashboard and the inbox, which answer', async () => {
    const cwd = tempDir();
    // A free port, released just before Parley takes it.
    const held = await holdPort();
    const port = held.port;
    await new Promise((r) => held.server.close(r));
    servers.splice(servers.indexOf(held.server), 1);
    const child = spawn(process.execPath, ['--import', TSX, MAIN], { cwd, env: bareEnv({ PORT: String(port), LOG_FORMAT: 'json' }) });
    children.push(child);
    child.stdout!.resume();
    const text = await banner(child);
    const url = `http://127.0.0.1:${port}`;
    expect(text).toContain(`Parley is running at ${url}\n`);
    expect(text).toContain(`demo:        ${url}/demo.html`);
    expect(text).toContain(`dashboard:   ${url}/telemetry`);
    expect(text).toMatch(new RegExp(`inbox: +${url}/inbox .*npx parley agents add`));
    // the secret it names is kept in ./data of the working directory, as the README says
    expect(existsSync(join(cwd, 'data', 'service-secret'))).toBe(true);
    for (const page of ['/demo.html', '/telemetry', '/inbox']) {
      const r = await fetch(`${url}${page}`);
      expect(r.status, page).toBe(200);
      expect(r.headers.get('content-type'), page).toMatch(/^text\/html/);
    }
  });

  it('a port already taken: exit 1 with one line that says how to choose another', async () => {
    const { port } = await holdPort();
    const r = spawnSync(process.execPath, ['--import', TSX, MAIN], {
      cwd: tempDir(),
      env: bareEnv({ PORT: String(port), LOG_FORMAT: 'json' }),
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status).toBe(1);
    const lines = String(r.stderr).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^parley: cannot start: .*EADDRINUSE.*PORT=3001 npm start, or server\.port in your profile/);
  });
});
