// A widget protocol client over a real socket, for integration tests.
import WebSocket from 'ws';

export interface WidgetClient {
  socket: WebSocket;
  frames: Record<string, any>[];
  send(frame: Record<string, unknown>): void;
  /** Waits for the next frame (after `from`) matching the predicate. */
  next(pred: (f: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export async function connectWidget(baseUrl: string, headers: Record<string, string> = {}): Promise<WidgetClient> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/widget/ws`, { headers });
  const frames: Record<string, any>[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (d) => {
    frames.push(JSON.parse(d.toString()));
    for (const w of [...waiters]) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  let cursor = 0;
  return {
    socket,
    frames,
    closed,
    send: (frame) => socket.send(JSON.stringify(frame)),
    next(pred, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          for (let i = cursor; i < frames.length; i++) {
            if (pred(frames[i])) {
              cursor = i + 1;
              waiters.delete(check);
              clearTimeout(timer);
              resolve(frames[i]);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching frame within ${timeoutMs} ms; frames: ${JSON.stringify(frames).slice(-2000)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => socket.close(),
  };
}

/** A widget connected and initialised (`init` answered by `ready`); the socket is closed if that fails. */
export async function startWidgetSession(baseUrl: string, init: { customerId: string; email: string }): Promise<WidgetClient> {
  const w = await connectWidget(baseUrl);
  try {
    w.send({ type: 'init', ...init });
    await w.next((f) => f.type === 'ready');
    return w;
  } catch (err) {
    w.close();
    throw err;
  }
}

/** Sends a customer message and resolves with the assistant's reply, after its `ack`. */
export async function askAndAwaitReply(w: WidgetClient, id: string, text: string, timeoutMs = 30_000): Promise<Record<string, any>> {
  w.send({ type: 'message', id, text });
  await w.next((f) => f.type === 'ack' && f.id === id, timeoutMs);
  return w.next((f) => f.type === 'message' && f.role === 'assistant', timeoutMs);
}
