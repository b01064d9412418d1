// A TCP proxy in front of a test PostgreSQL that can lose the answer to one statement: the statement reaches the
// server and runs (an autocommit statement commits), then the connection breaks before its answer reaches the
// client. What a network cut or a stalled server does to a real client, made exact: the client sees the connection
// lost, and the write is in the database all the same.
//
// node-postgres sends one statement at a time and waits for its answer (no pipelining), and PostgreSQL answers an
// extended-protocol statement at its Sync, after the commit: so once the client's bytes since the last answer hold
// every string of the pattern (a prepared statement's name, a parameter), the next bytes from the server are that
// statement's answer. They are dropped, and both sockets closed.
import { connect, createServer, type Socket } from 'node:net';

export interface CutProxy {
  readonly port: number;
  /** `url` (a database on the proxied server) with the proxy's host and port. */
  via(url: string): string;
  /** The next statement whose bytes contain every one of `pattern` runs, and its answer is lost; resolves when cut. */
  cutAnswerTo(pattern: string[]): Promise<void>;
  close(): Promise<void>;
}

export async function startCutProxy(target: { host: string; port: number }): Promise<CutProxy> {
  let armed: { pattern: string[]; done: () => void } | undefined;
  const sockets = new Set<Socket>();

  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let sent = ''; // what the client sent since the server last answered (latin1: bytes as they are)
    let cutting: (() => void) | undefined;
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (d) => {
      sent += d.toString('latin1');
      if (sent.length > 1 << 20) sent = sent.slice(-(1 << 16));
      if (armed && armed.pattern.every((p) => sent.includes(p))) {
        cutting = armed.done;
        armed = undefined;
      }
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      sent = '';
      if (cutting) {
        const done = cutting;
        cutting = undefined;
        end();
        done();
        return;
      }
      client.write(d);
    });
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', () => {
        sockets.delete(s);
        end();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cutAnswerTo(pattern) {
      return new Promise((resolve) => {
        armed = { pattern, done: resolve };
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
