// Issue 21: the production build. `npm run build` bundles the server into dist/main.js; plain `node` runs it (no
// tsx), native lmdb stays an external package, and the built server answers /health with the package's version.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';
import { parse as parseYaml } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { TEST_SECRET, tempDir } from '../support/parley.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';

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

/** The URL from a child Parley's start line on stderr (`stderrSoFar` gives what it wrote); rejects if it exits or stays silent 20 s. */
function startedAt(child: ChildProcess, stderrSoFar: () => string, exited: Promise<number | null>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start line in 20 s:\n${stderrSoFar()}`)), 20_000);
    child.stderr!.on('data', () => {
      const m = /Parley is running at (http:\/\/\S+)/.exec(stderrSoFar());
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code}:\n${stderrSoFar()}`)));
  });
}

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
    const child = trackChild(spawn(process.execPath, [MAIN, '--config', configPath], { cwd: dir, env: Object.assign({}, process.env, { LOG_FORMAT: '' }) }));
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const url = await startedAt(child, () => stderr, new Promise((r) => child.on('exit', r)));
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

// Docker is not installed where the tests run: the image's files are checked as text, and the command the image runs
// is run here, on the build above, with the image's config profile and a real PostgreSQL.
const DOCKERFILE = readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8');
/** A Dockerfile instruction's JSON (exec) form. */
const execForm = (instruction: string): string[] => {
  const m = new RegExp(`^${instruction}\\s+(\\[.*\\])\\s*$`, 'm').exec(DOCKERFILE);
  if (!m) throw new Error(`no ${instruction} in exec form`);
  return JSON.parse(m[1]) as string[];
};

async function nodeRows(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ node_id: string }>('SELECT node_id FROM nodes ORDER BY node_id')).rows.map((r) => r.node_id);
  } finally {
    await client.end();
  }
}

describe('the container image and the compose file (checked without Docker)', () => {
  it('Dockerfile: two stages, the runtime as the unprivileged node user, tini as PID 1 running node on dist/main.js: no npm, no tsx', () => {
    expect(DOCKERFILE.match(/^FROM /gm)).toHaveLength(2);
    expect(DOCKERFILE).toMatch(/^FROM \S+ AS build$/m);
    expect(DOCKERFILE).toMatch(/^RUN npm run build && npm prune --omit=dev/m);
    const runtime = DOCKERFILE.slice(DOCKERFILE.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER node$/m);
    expect(execForm('ENTRYPOINT')).toEqual(['/usr/bin/tini', '--']);
    const cmd = execForm('CMD');
    expect(cmd[0]).toBe('node');
    expect(cmd.at(-1)).toBe('dist/main.js');
    expect(cmd.join(' ')).not.toMatch(/npm|tsx/);
    const ignored = readFileSync(join(PROJECT_ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const path of ['.git', 'node_modules', 'dist', 'data']) expect(ignored).toContain(path);
  });

  it('docker-compose.yml parses: PostgreSQL, two Parley nodes with one storage url and their own ids, and a proxy that balances both', () => {
    const compose = parseYaml(readFileSync(join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { image?: string; build?: string; environment?: Record<string, string>; ports?: string[]; volumes?: string[] }>;
    };
    expect(Object.keys(compose.services).sort()).toEqual(['parley-a', 'parley-b', 'postgres', 'proxy']);
    const [a, b] = [compose.services['parley-a'], compose.services['parley-b']];
    expect(a.build).toBe('.');
    expect(b.build).toBe('.');
    expect(a.environment?.DATABASE_URL).toMatch(/^postgres:\/\/parley:.*@postgres:5432\/parley$/);
    expect(b.environment?.DATABASE_URL).toBe(a.environment?.DATABASE_URL);
    expect(b.environment?.SERVICE_SDK_SECRET).toBe(a.environment?.SERVICE_SDK_SECRET);
    expect([a.environment?.PARLEY_NODE_ID, b.environment?.PARLEY_NODE_ID]).toEqual(['parley-a', 'parley-b']);
    expect(compose.services.postgres.image).toMatch(/^postgres:/);
    expect(compose.services.proxy.image).toMatch(/^caddy:/);
    expect(compose.services.proxy.volumes).toContain('./deploy/Caddyfile:/etc/caddy/Caddyfile:ro');
    const caddyfile = readFileSync(join(PROJECT_ROOT, 'deploy', 'Caddyfile'), 'utf8');
    expect(caddyfile).toMatch(/reverse_proxy parley-a:3000 parley-b:3000 \{/);
    expect(caddyfile).toMatch(/health_uri \/ready/);
    expect(caddyfile).not.toMatch(/lb_policy (ip_hash|cookie|client_ip_hash)/); // no sticky sessions
  });

  it("the image's command and profile: node joins the cluster on PostgreSQL, and SIGTERM makes it leave and exit 0", async () => {
    const url = await createTestDatabase();
    const [command, ...args] = execForm('CMD');
    expect(command).toBe('node');
    const profile = /SERVICE_CONFIG=\/app\/(\S+)/.exec(DOCKERFILE)?.[1];
    expect(profile).toBe('config/config.cluster.yaml');
    const child = trackChild(
      spawn(process.execPath, args, {
        cwd: PROJECT_ROOT,
        env: Object.assign({}, process.env, {
          SERVICE_CONFIG: join(PROJECT_ROOT, profile!),
          DATABASE_URL: url,
          SERVICE_SDK_SECRET: TEST_SECRET,
          PARLEY_NODE_ID: 'image-node',
          PARLEY_LEASE_SECONDS: '1',
          HOST: '127.0.0.1',
          PORT: '0',
          DATA_DIR: tempDir(),
          LOG_FORMAT: '',
        }),
      }),
    );
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.resume();
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    const base = await startedAt(child, () => stderr, exited);
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).cluster).toMatchObject({ nodeId: 'image-node', status: 'member', leaseSeconds: 1 });
    expect(await nodeRows(url)).toEqual(['image-node']);
    const signalled = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(5000);
    expect(await nodeRows(url)).toEqual([]); // it left the cluster on the way out
  });
});
