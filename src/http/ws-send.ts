// Frames sent to one WebSocket while the event loop handles one callback (with the promise jobs it starts) leave in
// one socket write. ws writes every frame at once (cork, header, payload, uncork: a `writev` system call each), and a
// turn sends several frames to the same socket from one callback: every SDK call that one store commit starts goes to
// the one backend socket, a reply's last delta and its final message go to the same widget. Measured with
// bench/peer.ts, those `writev` calls were 12 % of Parley's busy CPU (BENCHMARKS.md, "Turns that cost half").
// The frames and their order are unchanged; they leave at the end of the callback instead of one by one during it.
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

const uncork = (raw: Socket) => raw.uncork();

/** `socket.send(text)`, the socket corked (once) until the current callback of the event loop is over. */
export function sendCoalesced(socket: WebSocket, text: string): void {
  // ws keeps its TCP socket in `_socket` (no public accessor); without one (a test double), frames go one by one.
  const raw = (socket as unknown as { _socket?: Socket })._socket;
  if (raw && raw.writableCorked === 0 && !raw.writableEnded) {
    raw.cork();
    // A tick, not setImmediate: it runs once this callback's promise jobs are done, before any other I/O is handled.
    process.nextTick(uncork, raw);
  }
  socket.send(text);
}
