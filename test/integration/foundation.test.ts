// Issue 2: health, readiness with the SDK, diagnostics, test mode, the process.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/src/index.ts';
import { spawnParley, startParley, TEST_SECRET, tempDir } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('health, readiness, diagnostics', () => {
  it('GET /health → ok with the package version', async () => {
    const p = await startParley();
    open.push(p);
    const body = await (await fetch(`${p.url()}/health`)).json();
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8'));
    expect(body).toEqual({ status: 'ok', version: pkg.version });
  });

  it('GET /ready reports the SDK connected with its functions; /__test__/sdk/functions lists them', async () => {
    const p = await startParley();
    open.push(p);
    const before = await (await fetch(`${p.url()}/ready`)).json();
    const { cluster, ...spec } = before;
    expect(spec).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', widget: 'ok', sdk: { connected: false, functions: 0 }, llm: 'ok' } });
    expect(cluster).toMatchObject({ status: 'member', nodes: [{ self: true, alive: true }] });
    const sdk = createClient();
    sdk.expose(
      'getOrderStatus',
      { description: 'Order status', parameters: { type: 'object', properties: { orderId: { type: 'string' } } } },
      async () => ({}),
    );
    sdk.expose('cancelOrder', { description: 'Cancel', mode: 'write' }, async () => ({}));
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    const res = await fetch(`${p.url()}/ready`);
    expect(res.status).toBe(200);
    expect((await res.json()).checks.sdk).toEqual({ connected: true, functions: 2 });
    expect(await (await fetch(`${p.url()}/__test__/sdk/functions`)).json()).toEqual(['getOrderStatus', 'cancelOrder']);
  });

  it('GET /diagnostics shows memory, paths, the catalog and every live actor with its state', async () => {
    const p = await startParley();
    open.push(p);
    const sdk = createClient();
    sdk.expose('cancelOrder', { description: 'Cancel an order', mode: 'write' }, async () => ({}));
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    const d = await (await fetch(`${p.url()}/diagnostics`)).json();
    expect(d.memory.heapUsed).toBeGreaterThan(0);
    expect(d.paths.storage).toBe(p.storagePath);
    expect(d.sdk.catalog).toEqual([{ name: 'cancelOrder', mode: 'write', description: 'Cancel an order', connection: expect.any(String) }]);
    const machines = d.actors.list.map((a: { machine: string; state: unknown }) => [a.machine, a.state]);
    expect(machines).toContainEqual(['supervisor', expect.anything()]);
    expect(machines).toContainEqual(['sdkConnection', 'registered']);
    expect(d.actors.list.find((a: { id: string }) => a.id === 'supervisor').context.conversations).toBe(0);

    // A conversation activates: the supervisor counts it (lifecycle events from the host).
    const w = await startWidgetSession(p.url(), { customerId: 'diag-1', email: 'd@example.com' });
    open.push(w);
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message');
    const after = await (await fetch(`${p.url()}/diagnostics`)).json();
    expect(after.actors.list.find((a: { id: string }) => a.id === 'supervisor').context.conversations).toBe(1);
    expect(after.actors.list.map((a: { machine: string }) => a.machine)).toContain('conversation');
  });

  it('outside test mode: /__test__/* do not exist; /diagnostics looks absent without the service secret', async () => {
    const p = await startParley({ testMode: false });
    open.push(p);
    expect((await fetch(`${p.url()}/__test__/sdk/functions`)).status).toBe(404);
    expect((await fetch(`${p.url()}/__test__/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"offsetMs":1}' })).status).toBe(
      404,
    );
    expect((await fetch(`${p.url()}/__test__/whatsapp/outbox`)).status).toBe(404);
    const absent = async (path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${p.url()}${path}`, { headers });
      return { status: res.status, body: await res.json() };
    };
    const unknownRoute = await absent('/no-such-route');
    for (const headers of <Record<string, string>[]>[
      {},
      { authorization: 'Bearer wrong' },
      { 'x-service-secret': 'wrong' },
      { authorization: `Bearer ${TEST_SECRET}x` },
    ]) {
      expect(await absent('/diagnostics', headers)).toEqual({
        status: 404,
        body: { error: { code: 'not_found', message: unknownRoute.body.error.message.replace('/no-such-route', '/diagnostics') } },
      });
    }
    for (const headers of <Record<string, string>[]>[{ authorization: `Bearer ${TEST_SECRET}` }, { 'x-service-secret': TEST_SECRET }]) {
      const res = await fetch(`${p.url()}/diagnostics`, { headers });
      expect(res.status).toBe(200);
      expect((await res.json()).actors.count).toBeGreaterThan(0);
    }
  });

  it('POST /__test__/clock moves the clock; 0 resets; bad bodies are 400', async () => {
    const p = await startParley();
    open.push(p);
    const post = (body: string) => fetch(`${p.url()}/__test__/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const moved = await (await post('{"offsetMs":86400000}')).json();
    expect(moved.offsetMs).toBe(86_400_000);
    expect(moved.now - Date.now()).toBeGreaterThan(86_399_000);
    expect((await (await post('{"offsetMs":0}')).json()).offsetMs).toBe(0);
    const bad = await post('{"offsetMs":"soon"}');
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/body\.offsetMs/);
  });

  it('unknown routes and malformed JSON get {error:{code,message}}', async () => {
    const p = await startParley();
    open.push(p);
    const nf = await fetch(`${p.url()}/nope`);
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual({ error: { code: 'not_found', message: 'No route GET /nope' } });
    const bad = await fetch(`${p.url()}/proactive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` },
      body: '{"x":',
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe('bad_request');
  });

  it('/ready is 503 naming the failing check (database closed)', async () => {
    const p = await startParley();
    open.push(p);
    // Point the check at a bundle that does not exist by closing the store: database fails.
    await p.services.store.close();
    const res = await fetch(`${p.url()}/ready`);
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.status).toBe('not_ready');
    expect(body.error.message).toMatch(/database/);
  });
});

describe('shutdown', () => {
  it('stops accepting and closes sockets with 1001 before the conversations drain', async () => {
    const p = await startParley();
    const sdk = createClient().expose('f', {}, () => 1);
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    const events: string[] = [];
    sdk.on('disconnected', ({ code }) => events.push(`sdk closed ${code}`));
    const host = p.runtime.host;
    const drain = host.stop.bind(host);
    host.stop = async () => {
      const accepted = await fetch(`${p.url()}/health`).then(
        () => true,
        () => false,
      );
      events.push(`drain (server accepting: ${accepted})`);
      return drain();
    };
    await p.stop();
    expect(events).toEqual(['sdk closed 1001', 'drain (server accepting: false)']);
  });
});

describe('the process', () => {
  it('a profile without `secret` and no SERVICE_SDK_SECRET: generates one, keeps it and prints it; SIGTERM exits 0 quickly', async () => {
    const storagePath = tempDir();
    // No `secret:` key at all: its default is ${SERVICE_SDK_SECRET}, unset here.
    const profile = join(storagePath, 'no-secret.yaml');
    writeFileSync(profile, `server:\n  port: 0\nstorage:\n  path: ${storagePath}\ndemo:\n  backend: false\n`);
    const env = { SERVICE_SDK_SECRET: '', SERVICE_CONFIG: profile };
    const proc = await spawnParley({ storagePath, env });
    const file = join(storagePath, 'service-secret');
    expect(existsSync(file)).toBe(true);
    const secret = readFileSync(file, 'utf8').trim();
    expect(secret.length).toBeGreaterThanOrEqual(40);
    // The child's output may lag its file: wait for the line.
    await expect.poll(() => proc.output(), { timeout: 15_000 }).toContain(`service secret (generated, kept in`);
    expect(proc.output()).toContain(secret);
    const started = Date.now();
    const code = await proc.kill('SIGTERM');
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    // restart keeps the same secret
    const again = await spawnParley({ storagePath, env });
    expect(readFileSync(file, 'utf8').trim()).toBe(secret);
    await again.kill('SIGTERM');
  }, 120_000);

  it('a profile without `secret` uses SERVICE_SDK_SECRET (no secret is generated)', async () => {
    const storagePath = tempDir();
    const profile = join(storagePath, 'no-secret.yaml');
    writeFileSync(profile, `server:\n  port: 0\nstorage:\n  path: ${storagePath}\ndemo:\n  backend: false\n`);
    const proc = await spawnParley({ storagePath, env: { SERVICE_SDK_SECRET: '2024010120240101', SERVICE_CONFIG: profile } });
    try {
      expect(existsSync(join(storagePath, 'service-secret'))).toBe(false);
      expect(proc.output()).not.toContain('service secret (generated');
      const sdk = createClient().expose('ping', {}, () => 'pong');
      await expect(sdk.listen({ url: proc.url, secret: '2024010120240101' })).resolves.toEqual({ functions: 1 });
      await sdk.close();
    } finally {
      await proc.kill('SIGTERM');
    }
  }, 120_000);

  it('a start-up failure (port in use) is one line and a non-zero exit, not a stack', async () => {
    const { spawnSync } = await import('node:child_process');
    const first = await startParley();
    open.push(first);
    const port = new URL(first.url()).port; // the second Parley asks for the same fixed port
    const dir = tempDir();
    writeFileSync(
      join(dir, 'busy.yaml'),
      `server:\n  port: ${port}\nstorage:\n  path: ${dir}\nsecret: busy-port-secret-0123\ndemo:\n  backend: false\nlogging:\n  level: silent\n`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '../../src/main.ts')], {
      env: { ...process.env, SERVICE_CONFIG: join(dir, 'busy.yaml') },
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^parley: cannot start: .*EADDRINUSE/);
  }, 120_000);

  it('a configuration error stops start-up with one line naming the key', async () => {
    const { spawnSync } = await import('node:child_process');
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.yaml'), 'server:\n  port: high\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '../../src/main.ts')], {
      env: { ...process.env, SERVICE_CONFIG: join(dir, 'bad.yaml') },
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status).toBe(78);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^parley: configuration error: server\.port: /);
  }, 120_000);
});
