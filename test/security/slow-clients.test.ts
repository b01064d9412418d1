// Issue 15 part 4: slow clients. Over raw sockets, a request whose headers or body trickle in (slow-loris) is answered
// 408 and closed once `server.request_timeout_ms` has passed; a request that arrives in time, a slow answer and an
// upgraded WebSocket are not affected.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkEveryMs } from '../../src/http/slow-clients.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const TIMEOUT_MS = 1000;
/** Node looks for late requests every checkEveryMs; allow that plus scheduling on a loaded machine. */
const CLOSED_WITHIN_MS = TIMEOUT_MS + checkEveryMs(TIMEOUT_MS) + 1500;

async function parley(timeoutMs = TIMEOUT_MS): Promise<TestParley> {
  const p = await startParley({ config: { server: { request_timeout_ms: timeoutMs } } });
  open.push(p);
  return p;
}

interface Trickle {
  /** Everything the server sent, and when the socket closed (ms after connecting). */
  done: Promise<{ received: string; closedAfterMs: number }>;
}

/** Connects, writes `head` at once, then one byte of `rest` every `everyMs` — for as long as the socket is open. */
function trickle(p: TestParley, head: string, rest: string, everyMs = 100): Trickle {
  const sock = net.connect(Number(new URL(p.url()).port), '127.0.0.1');
  open.push({ close: () => sock.destroy() });
  const started = Date.now();
  let received = '';
  sock.on('data', (d) => (received += d.toString()));
  sock.on('error', () => undefined);
  let i = 0;
  let timer: NodeJS.Timeout | undefined;
  sock.once('connect', () => {
    if (head) sock.write(head);
    timer = setInterval(() => {
      if (i < rest.length && sock.writable) sock.write(rest[i++]);
    }, everyMs);
  });
  const done = new Promise<{ received: string; closedAfterMs: number }>((resolve) =>
    sock.once('close', () => {
      clearInterval(timer);
      resolve({ received, closedAfterMs: Date.now() - started });
    }),
  );
  return { done };
}

function expect408(r: { received: string; closedAfterMs: number }) {
  expect(r.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  expect(r.received.toLowerCase()).toContain('connection: close');
  const body = JSON.parse(r.received.slice(r.received.indexOf('\r\n\r\n') + 4));
  expect(body).toEqual({ error: { code: 'request_timeout', message: expect.stringContaining('server.request_timeout_ms') } });
  expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(r.closedAfterMs).toBeLessThan(CLOSED_WITHIN_MS);
}

describe('slow clients', () => {
  it('headers that trickle in byte by byte: 408 and closed after request_timeout_ms', async () => {
    const p = await parley();
    const headers = `x-filler: ${'a'.repeat(200)}\r\n`.repeat(10); // 2 s of bytes at 100 ms each, never finished
    expect408(await trickle(p, 'GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n', headers).done);
  });

  it('a body that trickles in after complete headers: 408 and closed after request_timeout_ms', async () => {
    const p = await parley();
    const body = JSON.stringify({ email: 'slow@example.com', externalId: 'slow-body' }).padEnd(200, ' ');
    const head = `POST /auth/magic-link HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TEST_SECRET}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    expect408(await trickle(p, head, body).done);
  });

  it('a connection that never sends a byte is closed after request_timeout_ms', async () => {
    const p = await parley();
    const r = await trickle(p, '', '').done;
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(r.closedAfterMs).toBeLessThan(CLOSED_WITHIN_MS);
  });

  it('a slow request that arrives within its bound is answered; an upgraded WebSocket outlives the bound', async () => {
    // Slower than the 1 s bound above (about 1.5 s), against a bound of 5 s: answered.
    const patient = await parley(5000);
    const body = JSON.stringify({ email: 'ok@example.com', externalId: 'in-time' });
    const head = `POST /auth/magic-link HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TEST_SECRET}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`;
    const r = await trickle(patient, head, body, Math.ceil(1500 / body.length)).done;
    expect(r.closedAfterMs).toBeGreaterThan(TIMEOUT_MS);
    expect(r.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(r.received).toContain('/auth/verify?token=');

    const p = await parley();
    const w = await connectWidget(p.url());
    open.push(w);
    await new Promise((resolve) => setTimeout(resolve, CLOSED_WITHIN_MS));
    w.send({ type: 'init', customerId: 'patient', email: 'patient@example.com' });
    expect(await w.next((f) => f.type === 'ready')).toMatchObject({ customerId: expect.any(String) });
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    expect((await w.next((f) => f.type === 'message')).role).toBe('assistant');
  });
});
