// sendCoalesced (src/http/ws-send.ts): frames sent to one socket during one callback leave in one socket write, in
// order, and nothing waits past that callback. A real ws server and client over 127.0.0.1.
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { sendCoalesced } from '../../src/http/ws-send.ts';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

/** A connected pair: the server's side (whose writes are counted) and a client collecting what it receives. */
async function pair() {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const accepted = new Promise<WebSocket>((r) => server.once('connection', r));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as { port: number }).port}`);
  const received: string[] = [];
  client.on('message', (d) => received.push(d.toString()));
  await new Promise((r) => client.once('open', r));
  const socket = await accepted;
  cleanups.push(() => (client.terminate(), server.close()));
  // Count the TCP socket's writes (each is one system call): the stream calls _write or _writev once per write it makes.
  type Write = (...a: unknown[]) => void;
  const raw = (socket as unknown as { _socket: Socket & { _write: Write; _writev: Write } })._socket;
  let writes = 0;
  const write = raw._write.bind(raw);
  const writev = raw._writev.bind(raw);
  raw._write = (...a) => (writes++, write(...a));
  raw._writev = (...a) => (writes++, writev(...a));
  return { socket, received, writes: () => writes };
}

const until = async (ok: () => boolean) => {
  for (const end = Date.now() + 10_000; !ok();) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('sendCoalesced', () => {
  it('sends the frames of one callback in one write, in order', async () => {
    const p = await pair();
    sendCoalesced(p.socket, 'a');
    sendCoalesced(p.socket, 'b');
    await Promise.resolve(); // a promise job of the same callback
    sendCoalesced(p.socket, 'c');
    await until(() => p.received.length === 3);
    expect(p.received).toEqual(['a', 'b', 'c']);
    expect(p.writes()).toBe(1);
  });

  it('holds nothing past the callback: a later frame goes in a write of its own', async () => {
    const p = await pair();
    sendCoalesced(p.socket, 'first');
    await until(() => p.received.length === 1);
    sendCoalesced(p.socket, 'second');
    await until(() => p.received.length === 2);
    expect(p.received).toEqual(['first', 'second']);
    expect(p.writes()).toBe(2);
  });

  it('a frame before a close is still sent', async () => {
    const p = await pair();
    sendCoalesced(p.socket, 'bye');
    p.socket.close(4001, 'done');
    await until(() => p.received.length === 1);
    expect(p.received).toEqual(['bye']);
  });
});
