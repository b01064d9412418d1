// Webhook receivers that misbehave, for issue 34's isolation tests: one that never answers (`hang`), answers 200 at
// once and then trickles its body one byte every `trickleMs` (`trickle`, chunked; `trickle-sized`, with a
// Content-Length it never reaches), answers after `slowMs` (`slow`), or answers a fixed status (`status`). It counts the
// sockets Parley holds open to it (the receiver's side) and records every request with when its socket closed.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { verifyWebhook, type WebhookEvent } from '../../sdk/src/index.ts';

export type Behaviour =
  | { mode: 'hang' }
  | { mode: 'trickle' | 'trickle-sized'; trickleMs: number }
  | { mode: 'slow'; slowMs: number }
  | { mode: 'status'; status: number; headers?: Record<string, string> };

export interface BadRequest {
  event: WebhookEvent;
  arrivedAt: number;
  /** The request's path and query, and its `authorization` header. */
  url: string;
  authorization?: string;
  /** When the request's socket closed (undefined while open). */
  closedAt?: number;
}

export interface BadReceiver {
  url: string;
  requests: BadRequest[];
  /** Sockets open now, and the most seen open at once. */
  openSockets(): number;
  maxOpenSockets(): number;
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

/** `toleranceSeconds`: how far the signature's time may be from the receiver's (tests that move Parley's clock). */
export async function startBadReceiver(o: { secret: string; behaviour: Behaviour; toleranceSeconds?: number }): Promise<BadReceiver> {
  const requests: BadRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let maxOpen = 0;
  const every = (ms: number, fn: () => void) => {
    const t = setInterval(fn, ms);
    timers.add(t);
    return () => {
      clearInterval(t);
      timers.delete(t);
    };
  };
  const answer = (b: Behaviour, res: ServerResponse) => {
    if (b.mode === 'hang') return;
    if (b.mode === 'status') return void res.writeHead(b.status, Object.assign({ 'content-type': 'application/json' }, b.headers)).end('{}');
    if (b.mode === 'slow') {
      const t = setTimeout(() => res.writeHead(200).end('{}'), b.slowMs);
      timers.add(t);
      return;
    }
    res.writeHead(200, b.mode === 'trickle-sized' ? { 'content-length': '1000' } : {});
    res.write('x');
    const stop = every(b.trickleMs, () => res.write('x'));
    res.on('close', stop);
  };
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      let event: WebhookEvent;
      try {
        event = verifyWebhook(raw, req.headers['parley-signature'], o.secret, { toleranceSeconds: o.toleranceSeconds ?? 300 });
      } catch (err) {
        res.writeHead(400).end((err as Error).message); // not a request of the test's: never counted
        return;
      }
      const r: BadRequest = { event, arrivedAt: Date.now(), url: req.url ?? '' };
      if (req.headers.authorization !== undefined) r.authorization = req.headers.authorization;
      requests.push(r);
      req.socket.once('close', () => (r.closedAt = Date.now()));
      answer(o.behaviour, res);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    maxOpen = Math.max(maxOpen, sockets.size);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    openSockets: () => sockets.size,
    maxOpenSockets: () => maxOpen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
