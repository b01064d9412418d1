// The /sdk gateway with the real SDK over a real socket.
// Most cases mount just the gateway (fastify + @fastify/websocket + sdkGatewayPlugin with the real hub and
// supervisor runtime) so they can count upgrade requests and read every telemetry event in order; the restart
// case runs a whole Parley (support/parley.ts), since what it proves is the SDK finding a real server again.
import { afterEach, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import websocket from '@fastify/websocket';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { createClient, ParleyConnectionError, type ParleyClient } from '../../sdk/src/index.ts';
import { CloseCodes, MAX_FRAME_BYTES } from '../../sdk/src/protocol.ts';
import { createClock, createManualClock, type Clock, type ManualClock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import type { Config } from '../../src/config/schema.ts';
import type { Store } from '../../src/store/repos.ts';
import type { Services } from '../../src/services.ts';
import type { Telemetry, TelemetryEvent } from '../../src/telemetry/types.ts';
import { createSupervisorRuntime } from '../../src/runtime/supervisor.ts';
import { createSdkHub } from '../../src/sdk/hub.ts';
import { closeWebSocketsGoingAway } from '../../src/http/websocket-scope.ts';
import { sdkGatewayPlugin } from '../../src/sdk/gateway.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';

const SECRET = 'sdk-test-secret-0123456789';
const CTX = { customerId: 'cus_1', externalId: 'ext_1', channel: 'web' as const, conversationId: 'conv_1' };

function recordingTelemetry(): Telemetry & { events: Pick<TelemetryEvent, 'type' | 'data'>[] } {
  const events: Pick<TelemetryEvent, 'type' | 'data'>[] = [];
  return {
    events,
    event: (e) => void events.push({ type: e.type, data: e.data ?? {} }),
    turnCall() {},
    subscribe: () => () => {},
    flush: async () => {},
    close: async () => {},
  };
}

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function startServer(o: { clock?: Clock } = {}) {
  const clock = o.clock ?? createManualClock(Date.now());
  const telemetry = recordingTelemetry();
  const logger = createLogger('silent');
  const services: Services = {
    config: { safety: { invoke_timeout_ms: 10_000 } } as unknown as Config,
    clock,
    store: {} as Store,
    logger,
    telemetry,
    secret: SECRET,
    paths: { config: '(test)', storage: '(none)', public: '(none)' },
    version: 'test',
    testMode: true,
  };
  const app = Fastify({ forceCloseConnections: true });
  let sdkRequests = 0;
  app.addHook('onRequest', async (request) => {
    if (request.url === '/sdk') sdkRequests++;
  });
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES }, preClose: closeWebSocketsGoingAway });
  const supervisor = createSupervisorRuntime({ clock, logger, telemetry, idleMs: 60_000, passivate: () => {} });
  const hub = createSdkHub({ services, supervisor });
  await app.register(sdkGatewayPlugin, { services, hub, supervisor });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
    supervisor.stop();
  };
  cleanups.push(close);
  return { app, hub, supervisor, clock, telemetry, url: address, wsUrl: `${address.replace('http', 'ws')}/sdk`, close, sdkRequests: () => sdkRequests };
}

function client(): ParleyClient {
  const c = createClient();
  cleanups.push(() => c.close());
  return c;
}

/** A raw socket, to see what the SDK hides (HTTP refusals, close codes, error frames). */
function rawSocket(url: string, headers: Record<string, string> = { Authorization: `Bearer ${SECRET}` }) {
  const ws = new WebSocket(url, { headers });
  cleanups.push(() => ws.terminate());
  const frames: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (d) => {
    frames.push(JSON.parse(d.toString()));
    waiters.splice(0).forEach((w) => w());
  });
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  opened.catch(() => {}); // awaited only by tests that expect the upgrade
  const refused = new Promise<{ status: number; body: unknown }>((resolve) => {
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
  });
  const closed = new Promise<{ code: number; at: number }>((resolve) => ws.once('close', (code) => resolve({ code, at: Date.now() })));
  const nextFrame = async (n = frames.length + 1) => {
    while (frames.length < n) await new Promise<void>((r) => waiters.push(r));
    return frames[n - 1];
  };
  return { ws, frames, opened, refused, closed, nextFrame, send: (f: unknown) => ws.send(typeof f === 'string' ? f : JSON.stringify(f)) };
}

const until = async (cond: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

function exposeShop(c: ParleyClient, seen: { ids: string[] } = { ids: [] }) {
  return c
    .expose('lookup_order', { description: 'Find an order', parameters: z.object({ orderId: z.string().min(1) }) }, async ({ orderId }, ctx) => {
      seen.ids.push(ctx.invocationId);
      if (orderId === 'boom') throw Object.assign(new Error('order service down'), { code: 'upstream_down' });
      return { orderId, status: 'shipped', customerId: ctx.customerId, channel: ctx.channel, conversationId: ctx.conversationId, externalId: ctx.externalId };
    })
    .expose(
      'cancel_order',
      {
        description: 'Cancel an order',
        parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        mode: 'destructive',
      },
      () => ({ cancelled: true }),
    );
}

describe('SDK gateway with the real SDK', () => {
  it('registers: the catalog lists the names, the count is replied, telemetry records it', async () => {
    const s = await startServer();
    const c = exposeShop(client());
    await expect(c.listen({ secret: SECRET, url: s.url })).resolves.toEqual({ functions: 2 });
    expect(s.hub.catalog().map((f) => [f.name, f.mode])).toEqual([
      ['lookup_order', 'read'],
      ['cancel_order', 'destructive'],
    ]);
    expect(s.hub.catalog()[0].parameters).toMatchObject({ type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] });
    expect(s.hub.connectionCount()).toBe(1);
    expect(s.hub.registeredCount()).toBe(1);
    expect(s.telemetry.events.map((e) => e.type)).toEqual(['sdk.connected', 'sdk.registered']);
    expect(s.telemetry.events[1].data).toMatchObject({ functions: 2, names: ['lookup_order', 'cancel_order'] });
    expect(s.supervisor.liveActors().find((a) => a.machine === 'sdkConnection')).toMatchObject({
      state: 'registered',
      context: { functions: ['lookup_order', 'cancel_order'] },
    });

    await c.close();
    await until(() => s.hub.catalog().length === 0);
    expect(s.telemetry.events.at(-1)).toMatchObject({ type: 'sdk.closed', data: { code: 1000 } });
    expect(s.supervisor.sdkSlotsAvailable()).toBe(32);
  });

  it('refuses a wrong or missing secret with 401 before the upgrade; listen rejects without retrying', async () => {
    const s = await startServer();
    const c = exposeShop(client());
    const err = await c.listen({ secret: 'wrong', url: s.wsUrl }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParleyConnectionError);
    expect((err as ParleyConnectionError).status).toBe(401);

    const missing = rawSocket(s.wsUrl, {});
    await expect(missing.refused).resolves.toEqual({ status: 401, body: { error: { code: 'unauthorized', message: expect.any(String) } } });
    const wrong = rawSocket(s.wsUrl, { Authorization: `Bearer ${SECRET}x` });
    expect((await wrong.refused).status).toBe(401);

    await new Promise((r) => setTimeout(r, 800)); // a retry (after 0.25–0.5 s) would have happened by now
    expect(s.sdkRequests()).toBe(3); // the SDK's one attempt and the two raw sockets
    expect(s.telemetry.events.filter((e) => e.type === 'sdk.connected')).toHaveLength(0);
    expect(s.supervisor.sdkSlotsAvailable()).toBe(32);

    // a plain (non-upgrade) request with the secret takes no slot for good
    const plain = await fetch(`${s.url}/sdk`, { headers: { Authorization: `Bearer ${SECRET}` } });
    expect(plain.status).toBeGreaterThanOrEqual(400);
    await until(() => s.supervisor.sdkSlotsAvailable() === 32);
  });

  it('holds 32 connections and refuses the 33rd with 503 while the 32 stay up', async () => {
    const s = await startServer();
    const clients = Array.from({ length: 32 }, (_, i) => client().expose(`fn_${i}`, {}, () => i));
    await Promise.all(clients.map((c) => c.listen({ secret: SECRET, url: s.url })));
    expect(s.hub.connectionCount()).toBe(32);
    expect(s.supervisor.sdkSlotsAvailable()).toBe(0);

    const extra = rawSocket(s.wsUrl);
    await expect(extra.refused).resolves.toEqual({ status: 503, body: { error: { code: 'too_many_connections', message: expect.any(String) } } });
    await new Promise((r) => setTimeout(r, 100));
    expect(s.hub.connectionCount()).toBe(32);
    expect(clients.every((c) => c.connected && c.registered)).toBe(true);
    expect(s.hub.catalog()).toHaveLength(32);
    await expect(s.hub.invoke('fn_31', {}, CTX)).resolves.toEqual({ ok: true, data: 31 });

    // one leaves: a slot is free again
    await clients[0].close();
    await until(() => s.supervisor.sdkSlotsAvailable() === 1);
    const again = rawSocket(s.wsUrl);
    await again.opened;
  });

  it('closes a connection that never registers with 4008 between 15 and 16 s (real time)', async () => {
    const s = await startServer({ clock: createClock() });
    const raw = rawSocket(s.wsUrl);
    await raw.opened;
    const openedAt = Date.now();
    const { code, at } = await raw.closed;
    expect(code).toBe(CloseCodes.registerTimeout); // the machine's code is the protocol's
    expect(at - openedAt).toBeGreaterThanOrEqual(14_950);
    expect(at - openedAt).toBeLessThan(16_000);
    await until(() => s.supervisor.sdkSlotsAvailable() === 32);
  }, 25_000);

  it('answers bad frames with an error frame and keeps the connection; the next invoke works', async () => {
    const s = await startServer();
    const raw = rawSocket(s.wsUrl);
    await raw.opened;
    raw.send({ type: 'register', functions: [{ name: 'echo' }] });
    expect(await raw.nextFrame(1)).toEqual({ type: 'registered', functions: 1 });

    raw.send('this is not json');
    expect(await raw.nextFrame(2)).toEqual({ type: 'error', code: 'bad_frame', message: 'frame is not valid JSON' });
    raw.send({ type: 'teleport' });
    expect(await raw.nextFrame(3)).toEqual({ type: 'error', code: 'bad_frame', message: 'unknown frame type "teleport"' });
    raw.send({ type: 'result', ok: true });
    const schemaError = await raw.nextFrame(4);
    expect(schemaError).toMatchObject({ type: 'error', code: 'bad_frame' });
    expect(schemaError.message).toContain('result.id');
    raw.send({ type: 'register', functions: [{ name: '1bad' }] });
    expect((await raw.nextFrame(5)).message).toContain('register.functions.0.name');
    raw.send({ type: 'register', functions: [{ name: 'a' }, { name: 'a' }] });
    expect(await raw.nextFrame(6)).toMatchObject({ type: 'error', code: 'bad_register', message: expect.stringContaining('declared twice') });

    const outcome = s.hub.invoke('echo', { x: 1 }, CTX, { invocationId: 'inv-raw-1' });
    const invoke = await raw.nextFrame(7);
    expect(invoke).toEqual({ type: 'invoke', id: 'inv-raw-1', name: 'echo', args: { x: 1 }, context: { ...CTX, verified: false } });
    raw.send({ type: 'result', id: 'inv-raw-1', ok: true, data: { echoed: true } });
    await expect(outcome).resolves.toEqual({ ok: true, data: { echoed: true } });
    expect(raw.ws.readyState).toBe(WebSocket.OPEN);
    expect(s.hub.catalog().map((f) => f.name)).toEqual(['echo']);
  });

  it('closes an oversize frame with 1009', async () => {
    const s = await startServer();
    const raw = rawSocket(s.wsUrl);
    await raw.opened;
    raw.send('x'.repeat(MAX_FRAME_BYTES + 1));
    expect((await raw.closed).code).toBe(1009);
    await until(() => s.supervisor.sdkSlotsAvailable() === 32);
  });

  it('invokes: result, handler error, invalid args, unknown function, timeout, disconnect; invocationId reaches the handler', async () => {
    const s = await startServer();
    const clock = s.clock as ManualClock;
    const seen = { ids: [] as string[] };
    let release: (() => void) | undefined;
    const c = exposeShop(client(), seen).expose('slow', {}, () => new Promise<void>((r) => (release = r)));
    await c.listen({ secret: SECRET, url: s.url });

    await expect(s.hub.invoke('lookup_order', { orderId: 'A1' }, CTX, { invocationId: 'inv-42' })).resolves.toEqual({
      ok: true,
      data: { orderId: 'A1', status: 'shipped', customerId: 'cus_1', channel: 'web', conversationId: 'conv_1', externalId: 'ext_1' },
    });
    expect(seen.ids).toEqual(['inv-42']);

    await expect(s.hub.invoke('lookup_order', { orderId: 'boom' }, CTX)).resolves.toEqual({
      ok: false,
      error: { message: 'order service down', code: 'upstream_down' },
    });
    expect(seen.ids[1]).toMatch(/^[0-9a-f-]{36}$/); // a random id when none is given

    const invalid = await s.hub.invoke('lookup_order', { orderId: 7 }, CTX);
    expect(invalid).toMatchObject({ ok: false, error: { code: 'invalid_args', message: expect.stringContaining('orderId') } });
    const invalidJsonSchema = await s.hub.invoke('cancel_order', {}, CTX);
    expect(invalidJsonSchema).toMatchObject({ ok: false, error: { code: 'invalid_args' } });
    await expect(s.hub.invoke('cancel_order', { orderId: 'A1' }, CTX)).resolves.toEqual({ ok: true, data: { cancelled: true } });

    await expect(s.hub.invoke('nope', {}, CTX)).resolves.toMatchObject({ ok: false, error: { code: 'unknown_function' } });

    const timingOut = s.hub.invoke('slow', {}, CTX, { timeoutMs: 5_000 });
    await until(() => release !== undefined);
    clock.advance(4_999);
    let settled = false;
    void timingOut.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    clock.advance(1);
    await expect(timingOut).resolves.toMatchObject({ ok: false, error: { code: 'timeout' } });
    release!();
    release = undefined;

    const cut = s.hub.invoke('slow', {}, CTX, { timeoutMs: 60_000 });
    await until(() => release !== undefined);
    await c.close();
    await expect(cut).resolves.toMatchObject({ ok: false, error: { code: 'disconnected' } });
  });

  it('a duplicate name resolves to the most recent registration and falls back when it leaves', async () => {
    const s = await startServer();
    const first = client().expose('whoami', {}, () => 'first');
    await first.listen({ secret: SECRET, url: s.url });
    const second = client()
      .expose('whoami', {}, () => 'second')
      .expose('extra', {}, () => 1);
    await second.listen({ secret: SECRET, url: s.url });
    expect(
      s.hub
        .catalog()
        .map((f) => f.name)
        .sort(),
    ).toEqual(['extra', 'whoami']);
    await expect(s.hub.invoke('whoami', {}, CTX)).resolves.toEqual({ ok: true, data: 'second' });
    await second.close();
    await until(() => s.hub.catalog().length === 1);
    await expect(s.hub.invoke('whoami', {}, CTX)).resolves.toEqual({ ok: true, data: 'first' });
  });

  it('delivers outbound messages through onSend and answers ingest', async () => {
    const s = await startServer();
    const delivered: unknown[] = [];
    const c = client()
      .expose('noop', {}, () => null)
      .onSend(async (m) => {
        delivered.push(m);
        if (m.to === 'nobody') throw new Error('no such recipient');
        return { messageId: 'wamid.1' };
      });
    expect(s.hub.canSend()).toBe(false);
    await c.listen({ secret: SECRET, url: s.url });
    expect(s.hub.canSend()).toBe(true);
    await expect(s.hub.send({ id: 'out-1', channel: 'whatsapp', to: '+15550001', content: 'hi' })).resolves.toEqual({ ok: true, messageId: 'wamid.1' });
    expect(delivered).toEqual([{ channel: 'whatsapp', to: '+15550001', content: 'hi' }]);
    await expect(s.hub.send({ id: 'out-2', channel: 'whatsapp', to: 'nobody', content: 'hi' })).resolves.toEqual({ ok: false, error: 'no such recipient' });

    await expect(c.ingest({ channel: 'whatsapp', from: '+15550001', text: 'hello' })).resolves.toMatchObject({
      type: 'ack',
      ok: false,
      error: 'ingest is not enabled',
    });
    const ingested: unknown[] = [];
    s.hub.setIngestHandler(async (frame, connectionId) => {
      ingested.push({ from: frame.from, text: frame.text, connectionId: typeof connectionId });
      return { ok: true };
    });
    await expect(c.ingest({ channel: 'whatsapp', from: '+15550001', text: 'hello', messageId: 'm1' })).resolves.toMatchObject({ type: 'ack', ok: true });
    expect(ingested).toEqual([{ from: '+15550001', text: 'hello', connectionId: 'string' }]);
  });

  it('reconnects and registers again by itself after a real Parley restarts on the same port and data (1001 on shutdown)', async () => {
    const first = await startParley();
    const { storagePath } = first;
    const port = Number(new URL(first.url()).port);
    let current: TestParley = first;
    cleanups.push(() => current.close());
    const c = exposeShop(client());
    const disconnects: number[] = [];
    let registrations = 0;
    c.on('disconnected', ({ code }) => disconnects.push(code));
    c.on('registered', () => registrations++);
    await c.listen({ secret: TEST_SECRET, url: first.url() });
    const sdkReady = async (url: string) => (await (await fetch(`${url}/ready`)).json()).checks.sdk;
    expect(await sdkReady(first.url())).toEqual({ connected: true, functions: 2 });

    await first.close();
    await until(() => disconnects.length === 1);
    expect(disconnects).toEqual([1001]);
    current = await startParley({ port, storagePath });
    expect(current.url()).toBe(first.url());
    await until(() => registrations === 2, 10_000); // nothing but the SDK's own reconnect loop
    expect(await sdkReady(current.url())).toEqual({ connected: true, functions: 2 });
    expect(await (await fetch(`${current.url()}/__test__/sdk/functions`)).json()).toEqual(['lookup_order', 'cancel_order']);
    await expect(current.runtime.hub.invoke('lookup_order', { orderId: 'Z9' }, CTX)).resolves.toMatchObject({ ok: true, data: { orderId: 'Z9' } });
  }, 20_000);
});
