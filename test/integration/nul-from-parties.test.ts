// Text holding NUL (U+0000) from parties other than customers and HTTP clients — the model (a reply, streamed deltas,
// a tool call's name and arguments, a JSON answer), an SDK backend's frames (a tool result or error), an MCP server's
// tool result, knowledge documents imported or fetched — never wedges a conversation and is stored the same on both
// engines. PostgreSQL's text and jsonb cannot hold U+0000, LMDB can: text Parley keeps has U+FFFD in its place where
// it comes in (src/http/storable-text.ts), a backend's frame is refused with bad_frame (a result as a failed call).
// Each case sends NUL through one party, then shows the conversation still answers the next customer message, its
// history reads back without NUL, and nothing was logged at error level.
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { createClient, type ParleyClient } from '../../sdk/src/index.ts';
import { importFolder } from '../../src/knowledge/import.ts';
import { createOpenAiProvider } from '../../src/llm/openai.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { until } from '../support/mcp.ts';
import { startParley, TEST_SECRET, tempDir, type TestParley } from '../support/parley.ts';
import { askAndAwaitReply, connectWidget, startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const NUL = '\u0000';
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function parleyWith(o: { mcp?: Record<string, unknown>[] } = {}): Promise<{ p: TestParley; llm: FakeOpenAi }> {
  const llm = await startFakeOpenAi();
  open.push(llm);
  const p = await startParley({
    config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' }, ...(o.mcp ? { tools: { mcp: o.mcp as never } } : {}) },
  });
  open.push(p);
  return { p, llm };
}

/** An SDK backend exposing `getOrderStatus`, answered by `handler`. */
async function backend(p: TestParley, handler: (args: { orderId: string }) => Promise<unknown>): Promise<ParleyClient> {
  const sdk = createClient({ backoff: { initialMs: 100, maxMs: 400 } });
  sdk.expose('getOrderStatus', { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) }, handler);
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  open.push({ close: () => sdk.close() });
  await until(async () => ((await (await fetch(`${p.url()}/__test__/sdk/functions`)).json()) as string[]).includes('getOrderStatus'), 'the SDK registered');
  return sdk;
}

async function widget(p: TestParley, customerId: string): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return w;
}

/** JSON text that spells a NUL (`\u0000`, not an escaped backslash before "u0000"). */
const spellsNul = (json: string) => /(?<!\\)(?:\\\\)*\\u0000/.test(json);

/** Log lines at error level or above. */
const errorLines = (p: TestParley) => p.logs.filter((l) => /"level":(50|60)/.test(l));

/** The tool message the model was sent last. */
const toolMessage = (req: any) => req.messages.filter((m: any) => m.role === 'tool').at(-1)?.content as string;

/**
 * The conversation still works after the NUL: the next customer message is answered, a new connection's history
 * holds every message (none with NUL), and nothing was logged at error level.
 */
async function stillWorks(p: TestParley, llm: FakeOpenAi, w: WidgetClient, customerId: string) {
  llm.script({ text: 'Anything else?' });
  expect((await askAndAwaitReply(w, 'after', 'one more thing', 60_000)).text).toBe('Anything else?');
  w.close();
  const again = await connectWidget(p.url());
  open.push(again);
  again.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  const ready = await again.next((f) => f.type === 'ready', 30_000);
  const history = (ready.history as { role: string; text: string }[]).filter((e) => e.role === 'user' || e.role === 'assistant');
  expect(history.at(-1)).toMatchObject({ role: 'assistant', text: 'Anything else?' });
  expect(spellsNul(JSON.stringify(ready.history))).toBe(false);
  // Every record stored (tool calls and results with their data included), read through the store's repository.
  const stored = await p.services.store.history.recent(ready.conversationId, 1000);
  expect(stored.length).toBeGreaterThanOrEqual(4);
  expect(spellsNul(JSON.stringify(stored))).toBe(false);
  expect(errorLines(p)).toEqual([]);
  return { history, stored };
}

describe('NUL from the model', () => {
  it('a streamed reply holding NUL: the customer sees U+FFFD in its deltas and message, history keeps it so, the next message is answered', async () => {
    const { p, llm } = await parleyWith();
    const w = await widget(p, 'nul-reply');
    llm.script({ text: `Your order${NUL} has shipped.`, chunks: ['Your order', NUL, ' has', ' shipped.'] });
    const reply = await askAndAwaitReply(w, 'm1', 'where is my order?', 60_000);
    expect(reply.text).toBe('Your order\uFFFD has shipped.');
    const deltas = w.frames.filter((f) => f.type === 'delta' && f.id === reply.id);
    expect(deltas.map((d) => d.text).join('')).toBe('Your order\uFFFD has shipped.');
    const { history } = await stillWorks(p, llm, w, 'nul-reply');
    expect(history.map((e) => e.text)).toEqual(['where is my order?', 'Your order\uFFFD has shipped.', 'one more thing', 'Anything else?']);
  }, 120_000);

  it('a tool call whose arguments hold NUL reaches the backend with U+FFFD, and the conversation goes on', async () => {
    const { p, llm } = await parleyWith();
    const seen: string[] = [];
    await backend(p, async ({ orderId }) => {
      seen.push(orderId);
      return { orderId, status: 'shipped' };
    });
    const w = await widget(p, 'nul-args');
    llm.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: `10${NUL}01` } }] }, { text: 'It has shipped.' });
    expect((await askAndAwaitReply(w, 'm1', 'status of 1001?', 60_000)).text).toBe('It has shipped.');
    expect(seen).toEqual(['10\uFFFD01']);
    await stillWorks(p, llm, w, 'nul-args');
  }, 120_000);

  it('a tool call whose name holds NUL is an unknown tool, and the conversation goes on', async () => {
    const { p, llm } = await parleyWith();
    await backend(p, async () => ({ status: 'shipped' }));
    const w = await widget(p, 'nul-name');
    llm.script({ toolCalls: [{ name: `getOrder${NUL}Status`, args: { orderId: '1001' } }] }, { text: 'I could not look that up.' });
    expect((await askAndAwaitReply(w, 'm1', 'status of 1001?', 60_000)).text).toBe('I could not look that up.');
    const { stored } = await stillWorks(p, llm, w, 'nul-name');
    expect(stored.map((r) => (r.data as { name?: string } | undefined)?.name).filter(Boolean)).toContain('getOrder\uFFFDStatus');
  }, 120_000);
});

describe('NUL from an SDK backend', () => {
  it('a tool result holding NUL is refused: the backend gets bad_frame, the model a failed call, and the conversation goes on', async () => {
    const { p, llm } = await parleyWith();
    const sdk = await backend(p, async ({ orderId }) => ({ orderId, status: `ship${NUL}ped` }));
    const told: Error[] = [];
    sdk.on('error', (err) => told.push(err));
    const w = await widget(p, 'nul-result');
    llm.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] }, { text: 'The lookup failed.' });
    expect((await askAndAwaitReply(w, 'm1', 'status of 1001?', 60_000)).text).toBe('The lookup failed.');
    const result = toolMessage(llm.requests[1]);
    expect(result).toContain('bad_result');
    expect(result).toContain('result frame: text holds a NUL character');
    expect(spellsNul(JSON.stringify(llm.requests[1]))).toBe(false);
    expect(told.map((e) => e.message)).toEqual([expect.stringMatching(/^Parley reported bad_frame: result frame: text holds a NUL character/)]);
    await stillWorks(p, llm, w, 'nul-result');
  }, 120_000);

  it('a tool error whose message holds NUL is refused the same way, and the conversation goes on', async () => {
    const { p, llm } = await parleyWith();
    await backend(p, async () => {
      throw new Error(`database${NUL}offline`);
    });
    const w = await widget(p, 'nul-error');
    llm.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] }, { text: 'The lookup failed.' });
    expect((await askAndAwaitReply(w, 'm1', 'status of 1001?', 60_000)).text).toBe('The lookup failed.');
    const result = toolMessage(llm.requests[1]);
    expect(result).toContain('result frame: text holds a NUL character');
    expect(spellsNul(JSON.stringify(llm.requests[1]))).toBe(false);
    await stillWorks(p, llm, w, 'nul-error');
  }, 120_000);
});

/**
 * An MCP server of its own over Streamable HTTP (stateless: a server and transport per request), whose tools answer
 * with NUL themselves (a tool's arguments from the model never hold one: they are made storable first): `nul_text` in
 * a text part and in structured content, `nul_error` as a tool error.
 */
async function nulMcpServer(): Promise<string> {
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const server = new McpServer({ name: 'nul-fixture', version: '1.0.0' });
    server.registerTool('nul_text', { description: 'Answers with NUL', inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text' as const, text: `{"status":"ship${NUL}ped"}` }],
      structuredContent: { status: `ship${NUL}ped`, [`k${NUL}`]: [`deep${NUL}`] },
    }));
    server.registerTool('nul_error', { description: 'Fails with NUL', inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
      isError: true,
      content: [{ type: 'text' as const, text: `inventory${NUL}offline` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => void serve(req, res).catch(() => res.destroy()));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  open.push({ close: () => new Promise((r) => http.close(r)) });
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

describe('NUL from an MCP server', () => {
  it('a tool result and a tool error holding NUL reach the model and the history with U+FFFD, and the conversation goes on', async () => {
    const { p, llm } = await parleyWith({ mcp: [{ id: 'nul', url: await nulMcpServer() }] });
    await until(
      async () => ((await (await fetch(`${p.url()}/ready`)).json()) as any).checks.mcp?.servers.find((s: any) => s.id === 'nul')?.connected,
      'MCP up',
    );
    const w = await widget(p, 'nul-mcp');
    llm.script(
      { toolCalls: [{ name: 'nul__nul_text', args: {} }] },
      { text: 'It has shipped.' },
      { toolCalls: [{ name: 'nul__nul_error', args: {} }] },
      {
        text: 'The lookup failed.',
      },
    );
    expect((await askAndAwaitReply(w, 'm1', 'status?', 60_000)).text).toBe('It has shipped.');
    expect(JSON.parse(toolMessage(llm.requests[1]))).toEqual({
      text: '{"status":"ship\uFFFDped"}',
      structuredContent: { status: 'ship\uFFFDped', 'k\uFFFD': ['deep\uFFFD'] },
    });
    expect((await askAndAwaitReply(w, 'm2', 'and again?', 60_000)).text).toBe('The lookup failed.');
    expect(toolMessage(llm.requests[3])).toContain('inventory\uFFFDoffline');
    expect(spellsNul(JSON.stringify(llm.requests))).toBe(false);
    await stillWorks(p, llm, w, 'nul-mcp');
  }, 120_000);
});

describe('NUL in a JSON answer of the model', () => {
  it('a verdict or rating that spells \\u0000 parses to U+FFFD; an escaped backslash before "u0000" is left alone', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    llm.script({ text: '{"verdict":"resolved","summary":"a\\u0000b","literal":"c\\\\u0000d"}' });
    const provider = createOpenAiProvider({ model: 'fake-1', baseUrl: llm.url, apiKey: 'k', timeoutMs: 30_000 });
    const answer = await provider.complete({ purpose: 'reflection', responseFormat: 'json', tools: [], messages: [{ role: 'user', content: 't' }] });
    expect(JSON.parse(answer.text ?? '')).toEqual({ verdict: 'resolved', summary: 'a\uFFFDb', literal: 'c\\u0000d' });
  }, 60_000);
});

describe('NUL in knowledge documents', () => {
  const search = async (p: TestParley, q: string) => {
    const res = await fetch(`${p.url()}/api/v1/knowledge/search?q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { items: { articleId: string; title: string; text?: string; url?: string }[] }).items;
  };

  it('`parley knowledge import`: a file holding NUL is imported with U+FFFD, and the files after it too', async () => {
    const p = await startParley();
    open.push(p);
    const dir = tempDir('parley-kb-nul-');
    writeFileSync(join(dir, 'a-returns.md'), `# Returns${NUL} policy\n\nSend items back within thirty${NUL} days.\n`);
    writeFileSync(join(dir, 'b-hours.txt'), 'Store hours\nOpen Monday to Saturday from nine to eight.\n');
    const lines: string[] = [];
    await importFolder(['import', dir, '--url', p.url(), '--secret', TEST_SECRET], { write: (l) => lines.push(l) });
    expect(lines.join('\n')).toContain('done: 2 files, 2 created, 0 updated');
    const [hit] = await search(p, 'thirty days');
    expect(hit).toMatchObject({ articleId: 'a-returns', title: 'Returns\uFFFD policy' });
    expect(spellsNul(JSON.stringify(hit))).toBe(false);
    expect((await search(p, 'open saturday'))[0]).toMatchObject({ articleId: 'b-hours' });
    expect(errorLines(p)).toEqual([]);
  }, 120_000);

  it('a synced source page holding NUL (and %00 in its URL) is kept with U+FFFD and found', async () => {
    const site = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.end('User-agent: *\nAllow: /\n');
      res.setHeader('content-type', 'text/plain');
      res.end(`Warranty${NUL} claims need the original receipt.\n`);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    open.push({ close: () => new Promise((r) => site.close(r)) });
    const base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    const p = await startParley({ config: { knowledge: { sources: [{ urls: [`${base}/warranty%00terms`] }], every: '24h' } } });
    open.push(p);
    const res = await fetch(`${p.url()}/api/v1/knowledge/sync`, { method: 'POST', headers: { authorization: `Bearer ${TEST_SECRET}` } });
    expect(res.status).toBe(200);
    const [hit] = await search(p, 'warranty receipt');
    expect(hit).toMatchObject({ title: 'warranty\uFFFDterms', url: `${base}/warranty%00terms` });
    expect(spellsNul(JSON.stringify(hit))).toBe(false);
    expect(errorLines(p)).toEqual([]);
  }, 120_000);
});

describe("NUL from a backend on the Python SDK's wire", () => {
  it('a result frame as Python\'s json.dumps writes it ("\\u0000", spaces after separators) is refused the same way', async () => {
    const { p, llm } = await parleyWith();
    const ws = new WebSocket(`${p.url().replace(/^http/, 'ws')}/sdk`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    open.push({ close: () => ws.close() });
    const frames: Record<string, any>[] = [];
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString());
      frames.push(f);
      // json.dumps({"type": "result", "id": ..., "ok": True, "data": {"status": "ship\x00ped"}}), byte for byte.
      if (f.type === 'invoke') ws.send(`{"type": "result", "id": ${JSON.stringify(f.id)}, "ok": true, "data": {"status": "ship\\u0000ped"}}`);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(
      '{"type": "register", "functions": [{"name": "getOrderStatus", "description": "Get the status of an order", "parameters": {"type": "object", "properties": {"orderId": {"type": "string"}}}, "mode": "read"}], "sdk": {"name": "parley-python", "version": "0.1.0"}, "sendProvider": false}',
    );
    await until(async () => ((await (await fetch(`${p.url()}/__test__/sdk/functions`)).json()) as string[]).includes('getOrderStatus'), 'registered');
    const w = await widget(p, 'nul-python');
    llm.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] }, { text: 'The lookup failed.' });
    expect((await askAndAwaitReply(w, 'm1', 'status of 1001?', 60_000)).text).toBe('The lookup failed.');
    expect(toolMessage(llm.requests[1])).toContain('bad_result');
    expect(frames.find((f) => f.type === 'error')).toMatchObject({
      code: 'bad_frame',
      message: expect.stringMatching(/^result frame: text holds a NUL character/),
    });
    await stillWorks(p, llm, w, 'nul-python');
  }, 120_000);
});

describe('NUL in an outcome the model estimates', () => {
  it("the experience estimate's reason spelling \\u0000 is stored with U+FFFD (a jsonb column on PostgreSQL)", async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    // The chat's answer, and the estimate's (asked for as JSON), whatever the order the calls come in.
    llm.fallback((body) => (body.response_format ? { text: '{"score": 4, "reason": "calm\\u0000and quick"}' } : { text: 'It has shipped.' }));
    const p = await startParley({
      config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' }, outcomes: { estimate_experience: true } },
    });
    open.push(p);
    const w = await widget(p, 'nul-outcome');
    expect((await askAndAwaitReply(w, 'm1', 'status of 1001?', 60_000)).text).toBe('It has shipped.');
    w.send({ type: 'resolution', answer: 'yes' });
    await w.next((f) => f.type === 'noted' && f.of === 'resolution', 60_000);
    const outcome = await until(async () => {
      const res = await fetch(`${p.url()}/conversations/conv_web_nul-outcome/outcome`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
      const body = (await res.json()) as { experience?: { score: number; comment: string } };
      return body.experience && body;
    }, 'the experience estimate');
    expect(outcome.experience).toMatchObject({ score: 4, comment: 'calm\uFFFDand quick' });
    expect(p.logs.filter((l) => /"level":(40|50|60)/.test(l))).toEqual([]);
  }, 120_000);
});
