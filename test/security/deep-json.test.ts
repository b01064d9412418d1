// Issue 8 part 3: JSON nested without limit, from a raw SDK or a widget. A
// deep `result` must not wedge the conversation (the customer still gets an
// answer, the next message works); deep frames get an `error` frame and the
// connection stays open.
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget, startWidgetSession } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

/** A raw SDK socket: frames in, frames out, no client library. */
async function rawSdk(p: TestParley) {
  const ws = new WebSocket(`${p.url().replace('http', 'ws')}/sdk`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  const frames: Record<string, any>[] = [];
  const listeners = new Set<(f: Record<string, any>) => void>();
  ws.on('message', (d) => {
    const f = JSON.parse(d.toString());
    frames.push(f);
    for (const l of listeners) l(f);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  open.push({ close: () => ws.close() });
  const next = (pred: (f: Record<string, any>) => boolean, ms = 5000) =>
    new Promise<Record<string, any>>((resolve, reject) => {
      const found = frames.find(pred);
      if (found) return resolve(found);
      const t = setTimeout(() => reject(new Error(`no frame; got ${JSON.stringify(frames).slice(0, 500)}`)), ms);
      const l = (f: Record<string, any>) => {
        if (!pred(f)) return;
        clearTimeout(t);
        listeners.delete(l);
        resolve(f);
      };
      listeners.add(l);
    });
  return { ws, frames, next, onFrame: (l: (f: Record<string, any>) => void) => listeners.add(l) };
}

const getOrderStatus = {
  name: 'getOrderStatus',
  description: 'Get the status of an order',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  mode: 'read',
};

describe('deeply nested JSON', () => {
  it('a raw SDK answering an invoke with data nested 30,000 deep: the customer gets an honest answer, and the next message works', async () => {
    const p = await startParley({ config: { llm: { provider: 'offline' }, safety: { invoke_timeout_ms: 10_000 } } });
    open.push(p);
    const sdk = await rawSdk(p);
    sdk.ws.send(JSON.stringify({ type: 'register', functions: [getOrderStatus] }));
    await sdk.next((f) => f.type === 'registered');
    let invokes = 0;
    sdk.onFrame((f) => {
      if (f.type !== 'invoke') return;
      // The first answer is hostile; later ones are normal.
      const data = invokes++ === 0 ? `{"nested":${deep(30_000)}}` : JSON.stringify({ orderId: '1002', status: 'shipped' });
      sdk.ws.send(`{"type":"result","id":${JSON.stringify(f.id)},"ok":true,"data":${data}}`);
    });

    const w = await startWidgetSession(p.url(), { customerId: 'deep-1', email: 'deep@example.com' });
    open.push(w);
    const started = Date.now();
    w.send({ type: 'message', id: 'm1', text: 'What is the status of order 1001?' });
    const first = await w.next((f) => f.type === 'message', 8000);
    expect(Date.now() - started).toBeLessThan(5000); // not the invoke timeout
    expect(first.text.length).toBeGreaterThan(0);
    expect(first.text).not.toContain('shipped');

    w.send({ type: 'message', id: 'm2', text: 'What is the status of order 1002?' });
    const second = await w.next((f) => f.type === 'message', 8000);
    expect(second.text).toContain('shipped');
    expect(sdk.ws.readyState).toBe(WebSocket.OPEN);
    expect(p.logs.join('').match(/conversation write failed/g) ?? []).toHaveLength(0);
  });

  it('a deep register frame → an error frame; the SDK connection stays open and can still register', async () => {
    const p = await startParley();
    open.push(p);
    const sdk = await rawSdk(p);
    sdk.ws.send(`{"type":"register","functions":[{"name":"x","parameters":{"a":${deep(30_000)}}}]}`);
    const err = await sdk.next((f) => f.type === 'error');
    expect(err).toMatchObject({ code: 'bad_frame', message: expect.stringMatching(/nested deeper/) });
    expect(sdk.ws.readyState).toBe(WebSocket.OPEN);
    sdk.ws.send(JSON.stringify({ type: 'register', functions: [getOrderStatus] }));
    await sdk.next((f) => f.type === 'registered');
  });

  it('a deep widget frame → an error frame; the widget connection stays open', async () => {
    const p = await startParley();
    open.push(p);
    const w = await connectWidget(p.url());
    open.push(w);
    w.socket.send(`{"type":"init","customerId":"deep-2","email":"d@example.com","x":${deep(20_000)}}`);
    const err = await w.next((f) => f.type === 'error');
    expect(err).toMatchObject({ code: 'bad_frame', message: expect.stringMatching(/nested deeper/) });
    w.send({ type: 'init', customerId: 'deep-2', email: 'd@example.com' });
    await w.next((f) => f.type === 'ready');
  });
});
