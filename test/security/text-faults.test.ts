// Issue 34 part 7: faults any client can cause at the edges. Bytes that are not UTF-8 in a text frame are answered
// with an `error` frame (the connection stays up) and logged without a stack, never at error level; a WebSocket
// protocol fault (a frame over the size limit) closes the connection with a quiet log line; text that is not valid
// Unicode (lone surrogates, which JSON can spell as "\ud800") is refused with `bad_frame` before any `ack` and never
// stored, on the widget, the SDK's ingest and the HTTP routes that take text (400).
import WebSocket from 'ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../sdk/src/protocol.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget, startWidgetSession } from '../support/widget-client.ts';

const LONE = '"hello \\ud800 there"'; // JSON text: a lone high surrogate, spelled with an escape

let p: TestParley;
const open: { close(): unknown }[] = [];
beforeEach(async () => {
  p = await startParley({ config: { logging: { level: 'debug' } } });
  open.push(p);
});
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** Log lines at warn or above, and any that carries a stack. */
const loudLines = () => p.logs.filter((l) => /"level":(40|50|60)/.test(l) || /"stack"/.test(l));

/** A raw socket on `path`: the frames it gets, and how it closed. */
async function raw(path: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`${p.url().replace('http', 'ws')}${path}`, { headers });
  const frames: Record<string, any>[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  open.push({ close: () => ws.close() });
  return { ws, frames, closed };
}

async function until<T>(what: string, probe: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the widget socket', () => {
  it('a text frame that is not UTF-8: a bad_frame error, the connection stays up, nothing logged loud or with a stack', async () => {
    const w = await startWidgetSession(p.url(), { customerId: 'utf-1', email: 'utf-1@example.com' });
    open.push(w);
    w.socket.send(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), { binary: false }); // {"<ff><fe>"}
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'bad_frame', message: expect.stringMatching(/not valid UTF-8/) });
    w.send({ type: 'message', id: 'after', text: 'still here?' });
    await w.next((f) => f.type === 'ack' && f.id === 'after');
    expect(p.logs.some((l) => /"level":20.*widget frame refused/.test(l))).toBe(true);
    expect(loudLines()).toEqual([]);
  });

  it('a message with a lone surrogate is refused with bad_frame before any ack, and nothing is stored', async () => {
    const w = await startWidgetSession(p.url(), { customerId: 'sur-1', email: 'sur-1@example.com' });
    open.push(w);
    w.socket.send(`{"type":"message","id":"lone","text":${LONE}}`);
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'bad_frame', message: expect.stringMatching(/^text: text is not valid Unicode/) });
    w.send({ type: 'message', id: 'fine', text: 'a well-formed one' });
    await w.next((f) => f.type === 'ack' && f.id === 'fine');
    expect(w.frames.some((f) => f.type === 'ack' && f.id === 'lone')).toBe(false);
    await w.next((f) => f.type === 'message' && f.role === 'assistant');
    w.close();
    // A new connection's history: the well-formed message only.
    const again = await connectWidget(p.url());
    open.push(again);
    again.send({ type: 'init', customerId: 'sur-1', email: 'sur-1@example.com' });
    const ready = await again.next((f) => f.type === 'ready');
    const texts = ready.history.filter((e: { role: string }) => e.role === 'user').map((e: { text: string }) => e.text);
    expect(texts).toEqual(['a well-formed one']);
    expect(loudLines()).toEqual([]);
  });
  it('a message holding NUL is refused with bad_frame before any ack (PostgreSQL cannot store it), and the next one works', async () => {
    const w = await startWidgetSession(p.url(), { customerId: 'nul-1', email: 'nul-1@example.com' });
    open.push(w);
    w.socket.send('{"type":"message","id":"nul","text":"before \\u0000 after"}');
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'bad_frame', message: expect.stringMatching(/^text: text holds a NUL character/) });
    w.send({ type: 'message', id: 'fine', text: 'without one' });
    await w.next((f) => f.type === 'ack' && f.id === 'fine');
    await w.next((f) => f.type === 'message' && f.role === 'assistant');
    expect(w.frames.some((f) => f.type === 'ack' && f.id === 'nul')).toBe(false);
    expect(loudLines()).toEqual([]);
  });
});

describe('the SDK socket', () => {
  const auth = { authorization: `Bearer ${TEST_SECRET}` };

  it('an ingest with a lone surrogate is refused with bad_frame (no ack); bytes that are not UTF-8 likewise; the connection stays up', async () => {
    const { ws, frames } = await raw('/sdk', auth);
    ws.send(`{"type":"ingest","id":"i1","channel":"web","from":"sdk-sur","text":${LONE}}`);
    const refused = await until('an error frame', () => frames.find((f) => f.type === 'error'));
    expect(refused).toMatchObject({ code: 'bad_frame', message: expect.stringMatching(/^ingest frame: text: text is not valid Unicode/) });
    ws.send(Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), { binary: false });
    const second = await until('a second error frame', () => frames.filter((f) => f.type === 'error')[1]);
    expect(second).toMatchObject({ code: 'bad_frame', message: 'frame is not valid UTF-8 text' });
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.send(JSON.stringify({ type: 'ingest', id: 'i2', channel: 'web', from: 'sdk-sur', text: 'well formed' }));
    await until('the ack of i2', () => frames.find((f) => f.type === 'ack' && f.id === 'i2'));
    expect(frames.some((f) => f.type === 'ack' && f.id === 'i1')).toBe(false);
    expect(loudLines()).toEqual([]);
  });

  it('an ingest holding NUL is refused with bad_frame (no ack); the connection stays up', async () => {
    const { ws, frames } = await raw('/sdk', auth);
    ws.send('{"type":"ingest","id":"n1","channel":"web","from":"sdk-nul","text":"a\\u0000b"}');
    const refused = await until('an error frame', () => frames.find((f) => f.type === 'error'));
    expect(refused).toMatchObject({ code: 'bad_frame', message: expect.stringMatching(/^ingest frame: text: text holds a NUL character/) });
    ws.send(JSON.stringify({ type: 'ingest', id: 'n2', channel: 'web', from: 'sdk-nul', text: 'without one' }));
    await until('the ack of n2', () => frames.find((f) => f.type === 'ack' && f.id === 'n2'));
    expect(frames.some((f) => f.type === 'ack' && f.id === 'n1')).toBe(false);
    expect(loudLines()).toEqual([]);
  });

  it('a frame over the size limit closes the connection (1009) with one info line, no stack', async () => {
    const { ws, closed } = await raw('/sdk', auth);
    ws.send('x'.repeat(MAX_FRAME_BYTES + 1));
    expect(await closed).toBe(1009);
    await until('the info line', () => p.logs.find((l) => /"level":30.*WS_ERR_UNSUPPORTED_MESSAGE_LENGTH.*WebSocket client fault/.test(l)));
    expect(loudLines()).toEqual([]);
  });
});

describe('HTTP routes that take text', () => {
  it('a body with a lone surrogate is a 400 naming the field, before anything is stored; bytes that are not UTF-8 likewise', async () => {
    const post = (path: string, body: string) =>
      fetch(`${p.url()}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` }, body });
    const proactive = await post('/proactive', `{"customerId":"nobody","channel":"web","text":${LONE}}`);
    expect(proactive.status).toBe(400);
    expect((await proactive.json()).error).toEqual({ code: 'bad_request', message: expect.stringMatching(/^text: text is not valid Unicode/) });
    const agent = await post('/conversations/conv_web_x/messages', `{"text":${LONE},"agent":{"name":"\\udfff"}}`);
    expect(agent.status).toBe(400);
    expect((await agent.json()).error.message).toMatch(/^text: text is not valid Unicode/);
    const nested = await post('/proactive', `{"items":[1,{"name":${LONE}}]}`);
    expect((await nested.json()).error.message).toMatch(/^items\.1\.name: /);
    const bytes = await fetch(`${p.url()}/proactive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_SECRET}` },
      body: Buffer.concat([Buffer.from('{"customerId":"nobody","channel":"web","text":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]),
    });
    expect(bytes.status).toBe(400);
    expect((await bytes.json()).error).toEqual({ code: 'bad_request', message: 'Body is not valid UTF-8' });
  });
});
