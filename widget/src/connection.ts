// The widget's socket: connect, init, reconnect with backoff, hand frames up.
import type { WidgetClientFrame, WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';
import { backoffDelay, type Status } from './state.ts';

export interface ConnectionOptions {
  url: string;
  init: () => WidgetClientFrame;
  onFrame: (frame: WidgetServerFrame) => void;
  onStatus: (status: Status) => void;
  /** Called after each `ready`, to re-send what was not acknowledged. */
  onReady: () => void;
  WebSocketImpl?: typeof WebSocket;
  setTimer?: (fn: () => void, ms: number) => unknown;
  /** Open the first socket only on `restart()` (a session token is being fetched first). */
  deferred?: boolean;
}

export interface Connection {
  send(frame: WidgetClientFrame): boolean;
  /** After a fatal error (e.g. a fresh session token is now available): connect again at once. */
  restart(): void;
  /** Waiting to reconnect (not after a fatal error): connect now instead of after the backoff. */
  reconnectNow(): void;
  close(): void;
}

const FATAL_CODES = new Set(['unauthorized', 'forbidden_origin']);

export function connect(o: ConnectionOptions): Connection {
  const WS = o.WebSocketImpl ?? WebSocket;
  const setTimer = o.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  let socket: WebSocket | undefined;
  let attempt = 0;
  let stopped = false;
  let fatal = false;
  let ready = false;
  // Bumped by each open: a backoff timer set for an older attempt does nothing once `reconnectNow` opened a socket.
  let generation = 0;

  const open = () => {
    if (stopped) return;
    generation++;
    ready = false;
    const s = new WS(o.url);
    socket = s;
    s.onopen = () => s.send(JSON.stringify(o.init()));
    s.onmessage = (e) => {
      let frame: WidgetServerFrame;
      try {
        frame = JSON.parse(String(e.data));
      } catch {
        return;
      }
      if (frame.type === 'ready') {
        ready = true;
        attempt = 0;
        o.onStatus('Connected');
      }
      if (frame.type === 'error' && FATAL_CODES.has(frame.code)) fatal = true;
      o.onFrame(frame);
      if (frame.type === 'ready') o.onReady();
    };
    s.onclose = () => {
      if (socket !== s) return;
      socket = undefined;
      if (stopped) return;
      if (fatal) return o.onStatus('Disconnected');
      o.onStatus('Reconnecting');
      const mine = generation;
      setTimer(() => mine === generation && !socket && open(), backoffDelay(attempt++));
    };
    s.onerror = () => {
      /* onclose follows */
    };
  };

  o.onStatus('Connecting');
  if (!o.deferred) open();

  return {
    send(frame) {
      if (!socket || socket.readyState !== 1 || !ready) return false;
      socket.send(JSON.stringify(frame));
      return true;
    },
    restart() {
      if (stopped || socket) return;
      fatal = false;
      attempt = 0;
      o.onStatus('Connecting');
      open();
    },
    reconnectNow() {
      if (stopped || socket || fatal || (o.deferred === true && generation === 0)) return;
      open();
    },
    close() {
      stopped = true;
      socket?.close(1000);
    },
  };
}
