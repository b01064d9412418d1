// A local HTTP server that receives Parley's outbound webhooks, checks every signature with the SDK's verifyWebhook,
// and answers with whatever `respond` says (e.g. fail the first five attempts of each event).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type WebhookEvent } from '../../sdk/src/index.ts';

export interface ReceivedWebhook {
  /** The verified event; undefined when the signature or the body was refused (`error` says why). */
  event?: WebhookEvent;
  error?: string;
  arrivedAt: number;
  /** This event id's attempt number here, from 1. */
  attempt: number;
  status: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Events answered 2xx, by id, in arrival order. */
  delivered(): WebhookEvent[];
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

/** `toleranceSeconds`: how far a signature's time may be from now (tests that move Parley's clock a day ahead). */
export async function startWebhookReceiver(o: {
  secret: string;
  respond?: (event: WebhookEvent, attempt: number) => number;
  toleranceSeconds?: number;
}): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const attempts = new Map<string, number>();
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const arrivedAt = Date.now();
      let event: WebhookEvent;
      try {
        event = verifyWebhook(
          raw,
          req.headers['parley-signature'],
          o.secret,
          o.toleranceSeconds === undefined ? undefined : { toleranceSeconds: o.toleranceSeconds },
        );
      } catch (err) {
        received.push({ error: (err as Error).message, arrivedAt, attempt: 0, status: 400 });
        res.writeHead(400).end();
        return;
      }
      const attempt = (attempts.get(event.id) ?? 0) + 1;
      attempts.set(event.id, attempt);
      const status = o.respond?.(event, attempt) ?? 200;
      received.push({ event, arrivedAt, attempt, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    delivered: () => received.filter((r) => r.event && r.status >= 200 && r.status < 300).map((r) => r.event!),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
