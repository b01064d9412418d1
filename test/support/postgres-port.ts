// A free TCP port for a test PostgreSQL, chosen at random BELOW the kernel's ephemeral range.
// A server that is stopped mid-test must get its port back when it restarts; a port from the
// ephemeral range (what `listen(0)` hands out) can meanwhile become the local end of any outgoing
// connection on the machine, and the restart would fail with "Address already in use".
// (get-port scans a range in order from one process, so parallel workers would all try the same first port.)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > LOWEST + 1000) return low;
  } catch {}
  return 32_768;
}

export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port in [10000, ephemeral low) that nothing listens on right now (the caller retries if it loses a race for it). */
export async function pickPostgresPort(): Promise<number> {
  const high = ephemeralLow();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    if (await isPortFree(port)) return port;
  }
  throw new Error(`no free port found in ${LOWEST}–${high - 1} after 50 tries`);
}
