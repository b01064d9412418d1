// A TCP proxy in front of a test Parley whose open connections can all be cut at once: what a network drop (a laptop
// waking up, a Wi-Fi change) does to a browser's WebSocket, while Parley itself keeps running. New connections after
// the cut go through again.
import { connect, createServer, type Socket } from 'node:net';

export interface TcpCutProxy {
  /** `http://127.0.0.1:<port>`: Parley's HTTP and WebSocket through the proxy. */
  readonly url: string;
  /** Destroys every open connection (both sides); returns how many were cut. */
  cutAll(): number;
  close(): Promise<void>;
}

export async function startTcpCutProxy(target: { host: string; port: number }): Promise<TcpCutProxy> {
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.pipe(upstream);
    upstream.pipe(client);
    for (const s of pair) {
      s.on('error', end);
      s.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const cutAll = () => {
    const cut = [...pairs];
    for (const [client, upstream] of cut) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    return cut.length;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    cutAll,
    async close() {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
