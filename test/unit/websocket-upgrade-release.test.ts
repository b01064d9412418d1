// releaseUpgradeRequest (src/http/websocket-scope.ts): an open WebSocket no longer keeps its upgrade's request
// (with its response, reply, headers and logger) alive, and a client fault on it is still logged with its path and
// closes it. Real fastify + @fastify/websocket + ws over 127.0.0.1, registered as Parley registers them.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Writable } from 'node:stream';
import Fastify, { type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { registerWebSocketSupport, releaseUpgradeRequest, routeUpgrades } from '../../src/http/websocket-scope.ts';
import { createLogger } from '../../src/logger.ts';
import { MAX_FRAME_BYTES } from '../../sdk/src/protocol.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server with one WebSocket route at /ws; `release`: whether its handler calls releaseUpgradeRequest. */
async function server(release: boolean) {
  const logs: string[] = [];
  const log = createLogger('info', new Writable({ write: (chunk, _enc, cb) => (logs.push(chunk.toString()), cb()) }));
  const app = Fastify();
  const upgrades = routeUpgrades(app.server, ['/ws']);
  const requests: WeakRef<FastifyRequest>[] = [];
  await app.register(async (scope) => {
    await registerWebSocketSupport(scope, upgrades, log);
    scope.get('/ws', { websocket: true }, (socket, request) => {
      if (release) releaseUpgradeRequest(socket, request, log);
      requests.push(new WeakRef(request));
      socket.send('ready');
    });
  });
  const url = (await app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
  cleanups.push(() => app.close());
  const open = async () => {
    const ws = new WebSocket(`${url}/ws?x=1`);
    cleanups.push(() => ws.terminate());
    await new Promise((r) => ws.once('message', r));
    return ws;
  };
  return { open, requests, logs };
}

/** Whether any of `refs` still holds its object after full collections. */
async function anyAlive(refs: WeakRef<object>[]): Promise<boolean> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return refs.some((r) => r.deref() !== undefined);
}

describe('releaseUpgradeRequest', () => {
  it('an open socket does not keep its upgrade request alive', async () => {
    const s = await server(true);
    for (let i = 0; i < 5; i++) await s.open();
    expect(s.requests).toHaveLength(5);
    expect(await anyAlive(s.requests)).toBe(false);
  });

  it('without it, the plugin keeps every request as long as its socket is open (what the release is for)', async () => {
    const s = await server(false);
    for (let i = 0; i < 3; i++) await s.open();
    expect(await anyAlive(s.requests)).toBe(true);
  });

  it('a client fault is still logged with the path (no query), and the socket is closed', async () => {
    const s = await server(true);
    const ws = await s.open();
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    ws.send(Buffer.alloc(MAX_FRAME_BYTES + 1));
    expect(await closed).toBeGreaterThan(0);
    for (const end = Date.now() + 10_000; !s.logs.some((l) => l.includes('WebSocket client fault'));) {
      if (Date.now() > end) throw new Error(`no log line: ${s.logs.join('')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const line = JSON.parse(s.logs.find((l) => l.includes('WebSocket client fault'))!);
    expect(line).toMatchObject({ path: '/ws', code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' });
  });
});
