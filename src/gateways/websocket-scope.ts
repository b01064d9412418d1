// @fastify/websocket adds two hooks and a handler wrapper to every route of the
// scope it is registered in (~2.5 µs on each HTTP request, measured with a bare
// fastify). Parley registers it only in a scope around its WebSocket routes and
// routes upgrade requests itself: one for a WebSocket path goes to the plugin,
// any other is answered 404 and closed (at the root, the plugin completed a
// handshake for an HTTP route and then closed it).
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { MAX_FRAME_BYTES } from '../../sdk/src/protocol.ts';
import { closeWebSocketsGoingAway } from './sdk.ts';

const NOT_FOUND = JSON.stringify({ error: { code: 'not_found', message: 'No WebSocket endpoint at this path' } });

/** Upgrade requests for `paths`, re-emitted as 'upgrade' on the returned emitter; the rest answered 404. */
export function routeUpgrades(server: Server, paths: readonly string[]): EventEmitter {
  const upgrades = new EventEmitter();
  const ours = new Set(paths);
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?')[0];
    if (ours.has(path)) {
      upgrades.emit('upgrade', request, socket, head);
      return;
    }
    socket.on('error', () => socket.destroy());
    socket.end(
      `HTTP/1.1 404 Not Found\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(NOT_FOUND)}\r\nconnection: close\r\n\r\n${NOT_FOUND}`,
    );
  });
  return upgrades;
}

/** Registers @fastify/websocket in `scope` (an encapsulated plugin holding the WebSocket routes), fed by `routeUpgrades`. */
export async function registerWebSocketSupport(scope: FastifyInstance, upgrades: EventEmitter) {
  // The plugin listens for upgrades on `options.server` when given one; it only ever calls on/off/emit.
  await scope.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES, server: upgrades as unknown as Server }, preClose: closeWebSocketsGoingAway });
}
