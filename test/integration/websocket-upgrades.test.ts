// Upgrade requests on the real server: WebSocket routes live in their own scope
// (src/http/websocket-scope.ts); an upgrade for any other path is answered
// 404 with an error body and its socket closed, and plain HTTP routes still work.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';

let p: TestParley | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

/** A raw upgrade request; resolves with everything the server wrote before closing the socket. */
function rawUpgrade(url: string, path: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (data += chunk));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(3000, () => reject(new Error(`socket still open after 3 s; got: ${data}`)));
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
  });
}

describe('WebSocket upgrades', () => {
  it('an upgrade for a path that is not a WebSocket route gets a 404 error body and a closed socket', async () => {
    p = await startParley();
    for (const path of ['/health', '/nope', '/sdk/extra', '/widget/ws/']) {
      const answer = await rawUpgrade(p.url(), path);
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code: 'not_found', message: 'No WebSocket endpoint at this path' } });
    }
  });

  it('the WebSocket routes still upgrade (query strings included), and plain routes answer as before', async () => {
    p = await startParley();
    const ws = new WebSocket(`${p.url().replace('http', 'ws')}/widget/ws?x=1`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.close();
    const sdk = new WebSocket(`${p.url().replace('http', 'ws')}/sdk`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    await new Promise<void>((resolve, reject) => {
      sdk.once('open', () => resolve());
      sdk.once('error', reject);
    });
    sdk.close();
    expect((await fetch(`${p.url()}/health`)).status).toBe(200);
    expect((await fetch(`${p.url()}/sdk`)).status).toBe(401);
    expect((await fetch(`${p.url()}/sdk`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).status).toBe(426);
    expect((await fetch(`${p.url()}/widget/ws`)).status).toBe(426);
  });
});
