// Closed-loop widget load: each socket sends a message, waits for its answer,
// and sends the next, for the length of a block.
import { WebSocket } from 'ws';
import type { LoadResult } from './lib.ts';

export /** Opens `n` sockets; each sends a message, waits for its answer, and repeats during a block. */
async function clients(n: number, url: string, init: (i: number) => string | undefined, isAnswer: (frame: { type: string }) => boolean) {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i++) {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const first = init(i);
    if (first) {
      ws.send(first);
      await new Promise<void>((resolve) => ws.once('message', () => resolve()));
    }
    sockets.push(ws);
  }
  let seq = 0;
  const block = (durationMs: number) =>
    new Promise<LoadResult>((resolve) => {
      const latencies: number[] = [];
      const started = performance.now();
      const end = started + durationMs;
      let running = sockets.length;
      for (const ws of sockets) {
        let t0 = 0;
        const send = () => {
          if (performance.now() >= end) {
            ws.off('message', onMessage);
            if (--running === 0) {
              const seconds = (performance.now() - started) / 1000;
              resolve({ requests: latencies.length, errors: 0, seconds, rps: latencies.length / seconds, latenciesMs: latencies });
            }
            return;
          }
          t0 = performance.now();
          ws.send(JSON.stringify({ type: 'message', id: `b${++seq}`, text: 'what is the status of order 1001?' }));
        };
        const onMessage = (d: WebSocket.RawData) => {
          if (!isAnswer(JSON.parse(d.toString()))) return;
          latencies.push(performance.now() - t0);
          send();
        };
        ws.on('message', onMessage);
        send();
      }
    });
  return { block, close: () => sockets.forEach((s) => s.terminate()) };
}
