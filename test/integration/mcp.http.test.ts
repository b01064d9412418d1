// Issue 37: an MCP server over Streamable HTTP (server-everything from npm in its streamableHttp mode): a customer's
// question answered through it; the server restarted (its sessions forgotten: 404 on the old session) and Parley
// connects again with a new session; while it is down Parley answers and /ready stays 200.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { freePort } from '../support/free-port.ts';
import { startEverythingHttp, until } from '../support/mcp.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const ready = async (p: TestParley) => (await (await fetch(`${p.url()}/ready`)).json()) as Record<string, any>;
const report = async (p: TestParley) => (await ready(p)).checks.mcp.servers[0];
const toolMessage = (req: any) => req.messages.filter((m: any) => m.role === 'tool').at(-1)?.content as string;

describe('MCP tools over Streamable HTTP', () => {
  it('answers through server-everything, survives a restart of the server (new session) and answers meanwhile', async () => {
    const port = await freePort();
    let everything = await startEverythingHttp(port);
    open.push({ close: () => everything.close() });
    const llm = await startFakeOpenAi();
    open.push(llm);
    const p = await startParley({
      config: {
        llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' },
        tools: { mcp: [{ id: 'every', url: everything.url, headers: { 'X-Test': '1' }, allow: ['echo', 'get-sum'] }] as never },
      },
    });
    open.push(p);
    await until(async () => (await report(p)).connected, 'the HTTP server connected');
    expect(await report(p)).toMatchObject({ id: 'every', transport: 'http', tools: 2, lastError: null });

    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'c-1', email: 'c-1@example.com' });
    await w.next((f) => f.type === 'ready');
    llm.script({ toolCalls: [{ name: 'every__echo', args: { message: 'ping 1' } }] }, (req) => ({ text: toolMessage(req) }));
    w.send({ type: 'message', id: 'm1', text: 'echo ping 1' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('Echo: ping 1');
    expect(llm.requests[0].tools.map((t: any) => t.function.name).sort()).toEqual(['every__echo', 'every__get-sum', 'handoff']);

    // The server goes away: a call fails honestly, Parley answers, /ready stays 200.
    await everything.close();
    llm.script({ toolCalls: [{ name: 'every__echo', args: { message: 'ping 2' } }] }, { text: 'The echo service is down.' });
    w.send({ type: 'message', id: 'm2', text: 'echo ping 2' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('The echo service is down.');
    expect(toolMessage(llm.requests[3])).toMatch(/^Error \(disconnected\)/);
    const down = await ready(p);
    expect(down.status).toBe('degraded');
    expect((await fetch(`${p.url()}/ready`)).status).toBe(200);

    // It comes back on the same port, knowing no session: Parley reconnects with a new one.
    everything = await startEverythingHttp(port);
    await until(async () => (await report(p)).connected, 'the HTTP server reconnected', 60_000);
    llm.script({ toolCalls: [{ name: 'every__echo', args: { message: 'ping 3' } }] }, (req) => ({ text: toolMessage(req) }));
    w.send({ type: 'message', id: 'm3', text: 'echo ping 3' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('Echo: ping 3');
  }, 120_000);

  it('a session the server forgot (404, or server-everything’s 400) is replaced without failing the call', async () => {
    const port = await freePort();
    let everything = await startEverythingHttp(port);
    open.push({ close: () => everything.close() });
    const llm = await startFakeOpenAi();
    open.push(llm);
    const p = await startParley({
      config: {
        llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' },
        tools: { mcp: [{ id: 'every', url: everything.url }] as never },
      },
    });
    open.push(p);
    await until(async () => (await report(p)).connected, 'the HTTP server connected');
    // Restarted between two calls, faster than anything notices: the next call meets a 404 on its old session.
    await everything.close();
    everything = await startEverythingHttp(port);
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'c-2', email: 'c-2@example.com' });
    await w.next((f) => f.type === 'ready');
    llm.script({ toolCalls: [{ name: 'every__get-sum', args: { a: 1, b: 2 } }] }, (req) => ({ text: toolMessage(req) }));
    w.send({ type: 'message', id: 'm1', text: '1+2' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toMatch(/3/);
    expect(toolMessage(llm.requests[1])).not.toMatch(/^Error/);
    expect((await report(p)).connections).toBe(2);
  }, 120_000);
});
