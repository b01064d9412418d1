// The widget unit tests' world: a fake WebSocket the test drives by hand (accept, push a frame, drop), fake timers
// and Math.random pinned at 1 (the reconnect jitter at its top: delays are exactly 0.5 s, 1 s, 2 s…).
import { afterEach, beforeEach, vi } from 'vitest';

export interface FakeSocket {
  readonly url: string;
  readyState: number;
  /** Every frame the widget sent on this socket, parsed. */
  sent: Record<string, unknown>[];
  onopen?: () => void;
  onmessage?: (e: { data: string }) => void;
  onclose?: () => void;
  onerror?: () => void;
  send(data: string): void;
  close(): void;
  /** The server side: the socket opens. */
  accept(): void;
  /** The server side: one frame arrives. */
  push(frame: Record<string, unknown>): void;
  /** The server side: the connection is gone. */
  drop(): void;
}

export interface FakeSockets {
  /** Every socket the widget opened, oldest first. */
  readonly all: FakeSocket[];
  /** What the widget takes as its WebSocket constructor. */
  readonly WebSocketImpl: typeof WebSocket;
  /** The socket opened last. */
  latest(): FakeSocket;
}

export function fakeSockets(): FakeSockets {
  const all: FakeSocket[] = [];
  class Socket implements FakeSocket {
    readyState = 0;
    sent: Record<string, unknown>[] = [];
    onopen?: () => void;
    onmessage?: (e: { data: string }) => void;
    onclose?: () => void;
    onerror?: () => void;
    constructor(readonly url: string) {
      all.push(this);
    }
    send(data: string) {
      this.sent.push(JSON.parse(data));
    }
    close() {
      this.drop();
    }
    accept() {
      this.readyState = 1;
      this.onopen?.();
    }
    push(frame: Record<string, unknown>) {
      this.onmessage?.({ data: JSON.stringify(frame) });
    }
    drop() {
      this.readyState = 3;
      this.onclose?.();
    }
  }
  return { all, WebSocketImpl: Socket as unknown as typeof WebSocket, latest: () => all[all.length - 1] };
}

/** Before each test: no sockets yet, fake timers (from `now` when given), Math.random at 1; after it, all restored. */
export function useWidgetFakes(sockets: FakeSockets, clock: { now?: number } = {}): void {
  beforeEach(() => {
    sockets.all.length = 0;
    vi.useFakeTimers(clock.now === undefined ? undefined : { now: clock.now });
    vi.spyOn(Math, 'random').mockReturnValue(1);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });
}

/** The server's `ready` frame for customer c1 in conversation conv. */
export const widgetReady = (history: unknown[] = []) => ({ type: 'ready', customerId: 'c1', conversationId: 'conv', history });
