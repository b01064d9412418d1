// Issue 8 part 2: faults at the edges — the SDK process dies, the LLM fails,
// the Graph API times out, LMDB refuses a write, a widget client stops reading.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { startFakeGraph } from '../support/fake-graph.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';
import { postWebhook, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function widget(p: TestParley, customerId: string): Promise<WidgetClient> {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  await w.next((f) => f.type === 'ready');
  return w;
}

function startBackendProcess(url: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = trackChild(
      spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'test/fixtures/sdk-backend.ts')], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, PARLEY_URL: url, SERVICE_SDK_SECRET: TEST_SECRET },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('registered')) resolve(child);
    });
    child.stderr!.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`backend exited ${code}: ${out}`)));
    open.push({ close: () => child.kill('SIGKILL') });
  });
}

describe('faults', () => {
  it('SDK process killed mid-invoke → an honest message within the invoke timeout; a new process connects and the next turn works', async () => {
    const p = await startParley({ config: { safety: { invoke_timeout_ms: 4000 } } });
    open.push(p);
    const backend = await startBackendProcess(p.url());
    const w = await widget(p, 'sdk-killed');
    const started = Date.now();
    let said = '';
    const inFlight = new Promise<void>((r) => backend.stdout!.on('data', (d) => (said += d).includes('invoked 999') && r()));
    w.send({ type: 'message', id: 'm1', text: 'status of order 999' });
    await inFlight; // the invoke reached the backend, which holds it
    backend.kill('SIGKILL');
    const reply = await w.next((f) => f.type === 'message', 15_000);
    // Within the invoke timeout, and well inside it: the closed connection fails the call, not the timer.
    expect(Date.now() - started).toBeLessThan(2500);
    expect(reply.text).toMatch(/Sorry, that didn't work/);
    await startBackendProcess(p.url());
    w.send({ type: 'message', id: 'm2', text: 'status of order 1001' });
    expect((await w.next((f) => f.type === 'message', 15_000)).text).toMatch(/1001 is shipped/);
  });

  it('LLM 500s: retried, then the fallback answers', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.fallback({ status: 500 });
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'm', max_retries: 1, fallback: { provider: 'offline' } } } });
    open.push(p);
    const w = await widget(p, 'llm-500');
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    const reply = await w.next((f) => f.type === 'message');
    expect(llm.requests).toHaveLength(2);
    expect(reply.text).toMatch(/can't look anything up|What would you like/);
    await p.services.telemetry.flush();
    const calls = await (await fetch(`${p.url()}/api/v1/telemetry/turn-calls`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).json();
    expect(calls.items.at(-1)).toMatchObject({ provider: 'offline', ok: true });
  });

  it('LLM timing out or sending malformed tool calls with no fallback → an apology; the actor is not stuck', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script(
      { text: 'slow', delayMs: 2000 },
      { text: 'slow', delayMs: 2000 },
      { toolCalls: [{ name: 'x', args: {} }], rawArguments: '{oops' },
      { toolCalls: [{ name: 'x', args: {} }], rawArguments: '{oops' },
      { text: 'fine again' },
    );
    const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'm', timeout_ms: 300, max_retries: 1 } } });
    open.push(p);
    const w = await widget(p, 'llm-broken');
    w.send({ type: 'message', id: 'm1', text: 'one' });
    expect((await w.next((f) => f.type === 'message')).text).toMatch(/trouble/);
    w.send({ type: 'message', id: 'm2', text: 'two' });
    expect((await w.next((f) => f.type === 'message')).text).toMatch(/trouble/);
    w.send({ type: 'message', id: 'm3', text: 'three' });
    expect((await w.next((f) => f.type === 'message')).text).toBe('fine again');
    const d = await (await fetch(`${p.url()}/diagnostics`)).json();
    expect(d.conversations.list.find((c: { conversationId: string }) => c.conversationId === 'conv_web_llm-broken').state).toBe('idle');
  });

  it('Graph API timeouts are retried with backoff until delivered', async () => {
    const graph = await startFakeGraph();
    open.push(graph);
    // The first request hangs (never accepted, so no status webhook ever comes), the second gets a 503.
    graph.failNext({ hang: true }, { status: 503 });
    const timeoutMs = 300;
    // undici notices the timeout up to ~1 s late and the first backoff is ≤ 500 ms: a grace well above both,
    // so a timeout retried like a 5xx cannot pass for one that waited for a status.
    const graceMs = 2500;
    const p = await startParley({
      config: {
        channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, send_timeout_ms: timeoutMs, uncertain_grace_ms: graceMs, ...WA } },
      },
    });
    open.push(p);
    await postWebhook(p.url(), webhookBody([textMessage('+15550111222', 'hello')]));
    await expect.poll(() => graph.delivered().length, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(graph.delivered()).toHaveLength(1);
    expect(graph.requests).toHaveLength(3);
    const [hung, unavailable, delivered] = graph.requests;
    // All three are the same send (one job id echoed as biz_opaque_callback_data).
    expect(new Set(graph.requests.map((r) => r.body.biz_opaque_callback_data)).size).toBe(1);
    // After the timeout the send is uncertain (Meta may have it): no resend before the grace for a status is over.
    // The grace runs from when Parley stored the attempt, a little before the request arrives here (its commit, a
    // loaded machine): 100 ms of slack, far from what a send retried like a 5xx shows (about 1.3 s).
    expect(unavailable.at - hung.at).toBeGreaterThanOrEqual(graceMs - 100);
    // After the 503, a backoff (never under 100 ms), not an immediate retry.
    expect(delivered.at - unavailable.at).toBeGreaterThanOrEqual(100 - 5);
  });

  it('an LMDB write failure fails the message cleanly (no ack, an error frame); the process stays up and recovers', async () => {
    const p = await startParley();
    open.push(p);
    const w = await widget(p, 'lmdb');
    const store = p.services.store;
    const real = store.transaction.bind(store);
    store.transaction = (() => Promise.reject(new Error('MDB_MAP_FULL: Environment mapsize limit reached'))) as typeof store.transaction;
    // The conversation's own write (`conversations.persist`, its own transaction) fails the same way.
    const realPersist = store.conversations.persist;
    store.conversations.persist = () => Promise.reject(new Error('MDB_MAP_FULL: Environment mapsize limit reached'));
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    const err = await w.next((f) => f.type === 'error');
    expect(err).toMatchObject({ code: 'unavailable' });
    expect(w.frames.some((f) => f.type === 'ack')).toBe(false);
    store.transaction = real;
    store.conversations.persist = realPersist;
    expect((await fetch(`${p.url()}/health`)).status).toBe(200);
    w.send({ type: 'message', id: 'm2', text: 'hello again' });
    await w.next((f) => f.type === 'ack' && f.id === 'm2');
    const replies = [await w.next((f) => f.type === 'message')];
    expect(replies[0].text.length).toBeGreaterThan(0);
  });

  it('a widget client that stops reading is cut off; server memory stays bounded', async () => {
    const p = await startParley({ config: { proactive: { enabled: true, daily_cap: 100_000 } } });
    open.push(p);
    const { createCustomerRepo } = await import('../../src/customers/repo.ts');
    const customers = createCustomerRepo(p.services.store, p.services.clock);
    // As anonymous init would create it: externalId in the anonymous namespace.
    await customers.upsert({ externalId: 'anon:slow', customerId: 'slow', email: 's@example.com' });
    await customers.setOptIn('anon:slow', true);
    // A raw socket that does the handshake and init, then never reads again.
    const port = Number(new URL(p.url()).port);
    const sock = net.connect(port, '127.0.0.1');
    open.push({ close: () => sock.destroy() });
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(
      `GET /widget/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    await new Promise((r) => setTimeout(r, 100));
    const payload = Buffer.from(JSON.stringify({ type: 'init', customerId: 'slow', email: 's@example.com' }));
    const mask = Buffer.from([1, 2, 3, 4]);
    const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]));
    sock.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]));
    sock.pause();
    const openWidgets = async () => (await (await fetch(`${p.url()}/diagnostics`)).json()).web.openWidgets as number;
    await expect.poll(openWidgets, { timeout: 15_000 }).toBe(1);
    const content = 'x'.repeat(4000);
    let pushedBytes = 0;
    while ((await openWidgets()) > 0 && pushedBytes < 64 * 1024 * 1024) {
      await Promise.all(
        Array.from({ length: 50 }, () =>
          fetch(`${p.url()}/proactive`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
            body: JSON.stringify({ customerExternalId: 'anon:slow', channel: 'web', content }),
          }),
        ),
      );
      pushedBytes += 50 * content.length;
    }
    // Dropped once its send buffer passed 1 MiB (plus what the kernel buffers): the server
    // never holds more than that for one slow client.
    expect(await openWidgets()).toBe(0);
    expect(pushedBytes).toBeLessThan(32 * 1024 * 1024);
  }, 120_000); // thousands of proactive sends until the socket is cut: on PostgreSQL under load, well past 30 s
});
