// One opener of bench/idle-sockets.ts: opens COUNT widget sockets to URL from LOCAL_ADDRESS (a loopback address of its
// own, so the openers do not share one address's ephemeral ports), each signed in as its own customer (`init`, then
// `ready`) as a widget left open in a tab is, and then says nothing. Reports how many are open; closes them when told.
import { WebSocket } from 'ws';

const url = process.env.URL!;
const count = Number(process.env.COUNT);
const localAddress = process.env.LOCAL_ADDRESS;
const prefix = process.env.PREFIX ?? 'idle';
const IN_FLIGHT = 50;
const sockets: WebSocket[] = [];

/** Opens socket `i` and waits for its `ready`. */
function open(i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, localAddress ? { localAddress } : {});
    ws.once('open', () => ws.send(JSON.stringify({ type: 'init', customerId: `${prefix}-${i}`, email: `${prefix}-${i}@example.com` })));
    ws.once('message', (d) => {
      const f = JSON.parse(d.toString()) as { type: string };
      if (f.type !== 'ready') return reject(new Error(`socket ${i}: ${d.toString()}`));
      sockets.push(ws);
      resolve();
    });
    ws.once('error', reject);
  });
}

let next = 0;
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    while (next < count) await open(next++);
  }),
);
process.send!({ open: sockets.length });
process.on('message', () => {
  for (const ws of sockets) ws.terminate();
  process.send!({ closed: sockets.length }, () => process.exit(0));
});
