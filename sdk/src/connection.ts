// The SDK's connection to Parley's /sdk WebSocket: dials with the secret, registers as soon as the socket opens,
// reconnects with backoff after a drop, and drops a connection the server has gone silent on (watchdog). A first
// attempt refused with 401 before any registration ends `listen` with the error instead of retrying forever.
import { WebSocket } from 'ws';
import { MAX_FRAME_BYTES, type ClientFrame } from './protocol.ts';
import { backoffDelay } from './backoff.ts';
import type { ClientOptions, ListenOptions } from './client-types.ts';
import type { Emit } from './events.ts';

export class ParleyConnectionError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ParleyConnectionError';
  }
}

/** `http://h:p` → `ws://h:p/sdk`; `ws://h:p/sdk` as is. */
export function sdkUrl(url: string): string {
  const u = new URL(url);
  if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new Error(`Unsupported URL scheme "${u.protocol}" (use ws:, wss:, http: or https:)`);
  if (!u.pathname.endsWith('/sdk')) u.pathname = `${u.pathname.replace(/\/$/, '')}/sdk`;
  return u.toString();
}

export interface ConnectionHooks {
  emit: Emit;
  /** The frame sent first on every socket that opens. */
  registerFrame(): ClientFrame;
  onFrame(raw: string): void;
  /** The socket closed; called before `disconnected` is emitted. */
  onClose(): void;
}

export interface Connection {
  /** Connects and registers; resolves on the first `registered` (a second call returns the same promise). */
  listen(options: ListenOptions): Promise<{ functions: number }>;
  /** Writes a frame to the open socket; false when there is none. */
  send(frame: ClientFrame): boolean;
  /** Parley's `registered` arrived: the backoff starts over, `listen` resolves. */
  registered(functions: number): void;
  isRegistered(): boolean;
  connected(): boolean;
  /** The URL and secret given to `listen`. */
  target(): { url: string; secret: string } | undefined;
  /** Stops reconnecting and closes the socket. */
  close(): Promise<void>;
}

type Listening = { promise: Promise<{ functions: number }>; resolve: (v: { functions: number }) => void; reject: (e: Error) => void; settled: boolean };

export function createConnection(options: ClientOptions, hooks: ConnectionHooks): Connection {
  const { emit } = hooks;
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 75_000;
  let target: { url: string; secret: string } | undefined;
  let ws: WebSocket | undefined;
  let isRegistered = false;
  let closed = false;
  let attempt = 0; // consecutive failed attempts since the last register
  let everRegistered = false;
  let connects = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  let lastHeard = 0;
  let listening: Listening | undefined;

  const send = (frame: ClientFrame): boolean => {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(frame));
    return true;
  };

  // Cheaper than re-arming a timer per frame: note when the server was last heard, check periodically.
  const heard = () => {
    lastHeard = Date.now();
  };
  const startWatchdog = (socket: WebSocket) => {
    clearInterval(watchdog);
    heard();
    watchdog = setInterval(
      () => {
        if (Date.now() - lastHeard >= heartbeatTimeoutMs) socket.terminate();
      },
      Math.max(50, Math.floor(heartbeatTimeoutMs / 5)),
    );
    watchdog.unref();
  };

  const failListen = (err: Error) => {
    if (listening && !listening.settled) {
      listening.settled = true;
      listening.reject(err);
    }
  };

  const scheduleReconnect = () => {
    if (closed) return;
    const delay = backoffDelay(attempt++, options.backoff);
    reconnectTimer = setTimeout(connect, delay);
  };

  function connect() {
    if (closed || !target) return;
    connects++;
    const firstAttempt = connects === 1;
    let opened = false;
    let refusal: ParleyConnectionError | undefined;
    const socket = new WebSocket(target.url, {
      headers: { Authorization: `Bearer ${target.secret}` },
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
    });
    ws = socket;

    socket.on('open', () => {
      opened = true;
      startWatchdog(socket);
      emit('connected');
      send(hooks.registerFrame());
    });
    socket.on('ping', heard);
    socket.on('message', (data, isBinary) => {
      lastHeard = Date.now();
      if (!isBinary) hooks.onFrame(data.toString());
    });
    socket.on('error', (err) => {
      refusal = refusalOf(err);
    });
    socket.on('close', (code, reasonBuf) => {
      if (ws === socket) ws = undefined;
      clearInterval(watchdog);
      isRegistered = false;
      hooks.onClose();
      if (opened) emit('disconnected', { code, reason: reasonBuf.toString() });
      else if (refusal) emit('error', refusal);
      if (closed) return;
      if (refusal?.status === 401 && firstAttempt && !everRegistered) {
        closed = true; // a wrong secret must not spin forever
        failListen(refusal);
        return;
      }
      scheduleReconnect();
    });
  }

  return {
    listen({ secret, url }) {
      if (listening) return listening.promise;
      let resolve!: (v: { functions: number }) => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<{ functions: number }>((res, rej) => ((resolve = res), (reject = rej)));
      listening = { promise, resolve, reject, settled: false };
      try {
        target = { url: sdkUrl(url), secret };
      } catch (err) {
        failListen(err as Error);
        return promise;
      }
      closed = false;
      connect();
      return promise;
    },

    send,

    registered(functions) {
      isRegistered = true;
      everRegistered = true;
      attempt = 0;
      emit('registered', { functions });
      if (listening && !listening.settled) {
        listening.settled = true;
        listening.resolve({ functions });
      }
    },

    isRegistered: () => isRegistered,
    connected: () => ws?.readyState === WebSocket.OPEN,
    target: () => target,

    async close() {
      closed = true;
      clearTimeout(reconnectTimer);
      clearInterval(watchdog);
      failListen(new ParleyConnectionError('The client was closed before it registered'));
      const socket = ws;
      if (!socket || socket.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
        else socket.close(1000, 'client closed');
        setTimeout(() => (socket.terminate(), resolve()), 2_000).unref();
      });
    },
  };
}

/** A socket error as the client reports it: a refused secret (401) says so; any other HTTP status is kept. */
function refusalOf(err: Error): ParleyConnectionError {
  const status = /Unexpected server response: (\d+)/.exec(err.message)?.[1];
  return new ParleyConnectionError(
    status === '401' ? 'Parley refused the SDK secret (401)' : `Could not connect to Parley: ${err.message}`,
    status ? Number(status) : undefined,
  );
}
