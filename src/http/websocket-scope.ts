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
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Logger } from '../logger.ts';
import { CloseCodes, MAX_FRAME_BYTES } from '../../sdk/src/protocol.ts';

const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
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

/**
 * Registers @fastify/websocket in `scope` (an encapsulated plugin holding the WebSocket routes), fed by `routeUpgrades`.
 * `log`: Parley's logger (the HTTP one drops lines below warn, and a client's fault is logged at info).
 */
export async function registerWebSocketSupport(scope: FastifyInstance, upgrades: EventEmitter, log: Logger) {
  // The plugin listens for upgrades on `options.server` when given one; it only ever calls on/off/emit.
  // skipUTF8Validation: ws would close a connection that sends invalid UTF-8 (1007) without a word; the gateways check
  // it themselves and answer with an `error` frame, as for any other bad frame.
  await scope.register(websocket, {
    options: { maxPayload: MAX_FRAME_BYTES, server: upgrades as unknown as Server, skipUTF8Validation: true },
    preClose: closeWebSocketsGoingAway,
    errorHandler: (error, socket, request) => onSocketError(log, error, socket, request),
  });
}

/**
 * An error on an open WebSocket (the plugin's default logs each at error level with its stack): a client breaking
 * the protocol (ws's `WS_ERR_*`: a frame too large, a bad opcode, a bad close code) or a connection lost is noise
 * any client can cause, logged at info without a stack; anything else is Parley's own and keeps its stack.
 */
function onSocketError(log: Logger, error: Error, socket: WebSocket, request: FastifyRequest): void {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code.startsWith('WS_ERR_') || CONNECTION_LOST.has(code))
    log.info({ code, reason: error.message, path: request.url.split('?')[0] }, 'WebSocket client fault: connection closed');
  else log.error({ err: error, path: request.url.split('?')[0] }, 'WebSocket handler failed');
  socket.terminate();
}

/** `preClose` for @fastify/websocket: close every socket with 1001 (going away), then the ws server. */
export async function closeWebSocketsGoingAway(this: FastifyInstance) {
  const server = this.websocketServer;
  for (const client of server.clients) client.close(CloseCodes.goingAway, 'server shutting down');
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
