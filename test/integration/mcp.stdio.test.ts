// Issue 37, parts 1, 2 and 4: MCP servers as tool sources over stdio, end to end — a real Parley, the real openai
// client against the fake model, the real MCP SDK talking to real MCP servers (server-everything from npm, and the
// fixture server of test/fixtures/ for what everything cannot produce), a real widget socket.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { EVERYTHING, fixtureServer, until } from '../support/mcp.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function parleyWith(mcp: Record<string, unknown>[]): Promise<{ p: TestParley; llm: FakeOpenAi }> {
  const llm = await startFakeOpenAi();
  open.push(llm);
  const p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' }, tools: { mcp: mcp as never } } });
  open.push(p);
  return { p, llm };
}

async function widget(p: TestParley, customerId = 'cust-1'): Promise<WidgetClient> {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  await w.next((f) => f.type === 'ready');
  return w;
}

const ready = async (p: TestParley) => (await fetch(`${p.url()}/ready`)).json() as Promise<Record<string, any>>;
const serverReport = async (p: TestParley, id: string) => (await ready(p)).checks.mcp?.servers.find((s: { id: string }) => s.id === id);
const connected = (p: TestParley, id: string) => until(async () => (await serverReport(p, id))?.connected && serverReport(p, id), `${id} connected`);
const toolNames = (req: any): string[] => req.tools.map((t: any) => t.function.name).sort();
const toolMessage = (req: any) => req.messages.filter((m: any) => m.role === 'tool').at(-1)?.content as string;

describe('MCP tools over stdio', () => {
  it('server-everything answers a customer through a turn; its child keeps PATH and gets nothing else of Parley’s environment', async () => {
    process.env.PARLEY_TEST_CANARY = 'must-not-leak'; // in Parley's environment before the child starts
    open.push({ close: () => delete process.env.PARLEY_TEST_CANARY });
    const { p, llm } = await parleyWith([{ id: 'every', command: process.execPath, args: [EVERYTHING, 'stdio'], env: { GREETING: 'hi' } }]);
    const report = await connected(p, 'every');
    expect(report.tools).toBeGreaterThan(5);
    llm.script({ toolCalls: [{ name: 'every__get-sum', args: { a: 20, b: 22 } }] }, (req) => ({
      text: `The total is ${toolMessage(req).match(/(\d+)\D*$/)?.[1]}.`,
    }));
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'what is 20 + 22?' });
    const reply = await w.next((f) => f.type === 'message', 30_000);
    expect(reply.text).toBe('The total is 42.');
    expect(toolNames(llm.requests[0])).toEqual(expect.arrayContaining(['every__echo', 'every__get-sum', 'every__get-env', 'handoff']));
    // A read tool: no confirmation was asked.
    expect(w.frames.some((f) => f.type === 'confirm')).toBe(false);

    llm.script({ toolCalls: [{ name: 'every__get-env', args: {} }] }, { text: 'ok' });
    w.send({ type: 'message', id: 'm2', text: 'env?' });
    await w.next((f) => f.type === 'message', 30_000);
    const env = JSON.parse(toolMessage(llm.requests[3]));
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.GREETING).toBe('hi');
    expect(env.PARLEY_TEST_CANARY).toBeUndefined();
  });

  it('an unannotated (destructive) tool asks the customer first: a decline never runs it, an approve runs it once with the invocation id in _meta', async () => {
    const fx = fixtureServer('acme');
    const { p, llm } = await parleyWith([fx.config]);
    await connected(p, 'acme');
    llm.script(
      { toolCalls: [{ name: 'acme__close_account', args: { customer: 'c-7' } }] },
      { text: 'OK, I left the account open.' },
      { toolCalls: [{ name: 'acme__close_account', args: { customer: 'c-7' } }] },
      { text: 'The account is closed.' },
    );
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'close my account' });
    const confirm = await w.next((f) => f.type === 'confirm', 30_000);
    expect(confirm).toMatchObject({ name: 'acme__close_account', args: { customer: 'c-7' } });
    w.send({ type: 'confirm', id: confirm.id, approve: false });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('OK, I left the account open.');
    expect(fx.calls()).toEqual([]);

    w.send({ type: 'message', id: 'm2', text: 'yes really, close it' });
    const again = await w.next((f) => f.type === 'confirm', 30_000);
    w.send({ type: 'confirm', id: again.id, approve: true });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('The account is closed.');
    expect(fx.calls()).toEqual([
      expect.objectContaining({ tool: 'close_account', args: { customer: 'c-7' }, meta: expect.objectContaining({ 'parley/invocationId': again.id }) }),
    ]);
    expect(toolMessage(llm.requests.at(-1))).toBe('Account c-7 closed.');
  });

  it('modes come from annotations, the operator overrides them, allow/deny filter the catalogue', async () => {
    const fx = fixtureServer('acme', { deny: ['hang'], modes: { update_note: 'read' } });
    const { p } = await parleyWith([fx.config]);
    await connected(p, 'acme');
    const diag = (await (await fetch(`${p.url()}/diagnostics`)).json()) as Record<string, any>;
    const modes = Object.fromEntries(diag.mcp.tools.map((t: { name: string; mode: string }) => [t.name, t.mode]));
    expect(modes).toMatchObject({ acme__lookup_plan: 'read', acme__update_note: 'read', acme__close_account: 'destructive' });
    expect(modes.acme__hang).toBeUndefined();
    expect(diag.mcp.servers).toEqual([expect.objectContaining({ id: 'acme', transport: 'stdio', connected: true, lastError: null })]);
  });

  it('isError is a failed tool result the model is told about; a hung call times out and the turn still ends', async () => {
    const fx = fixtureServer('acme', { timeout_ms: 1500 });
    const { p, llm } = await parleyWith([fx.config]);
    await connected(p, 'acme');
    llm.script({ toolCalls: [{ name: 'acme__broken', args: {} }] }, { text: 'Sorry, the inventory is unavailable.' });
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'stock?' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('Sorry, the inventory is unavailable.');
    expect(toolMessage(llm.requests[1])).toBe('Error (tool_error): the inventory database is offline');

    llm.script({ toolCalls: [{ name: 'acme__hang', args: {} }] }, { text: 'That took too long, sorry.' });
    w.send({ type: 'message', id: 'm2', text: 'hang please' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('That took too long, sorry.');
    expect(toolMessage(llm.requests[3])).toMatch(/^Error \(timeout\): .*1500 ms/);

    // Progress notifications restart the timeout: 5 steps of 600 ms (3 s) pass a 1.5 s timeout.
    llm.script({ toolCalls: [{ name: 'acme__crawl', args: { steps: 5, everyMs: 600 } }] }, { text: 'done' });
    w.send({ type: 'message', id: 'm3', text: 'crawl' });
    await w.next((f) => f.type === 'message', 30_000);
    expect(toolMessage(llm.requests[5])).toBe('crawled 5 steps');
  }, 120_000);

  it('a changed tool list reaches the model (notifications/tools/list_changed)', async () => {
    const fx = fixtureServer('acme');
    const { p, llm } = await parleyWith([fx.config]);
    await connected(p, 'acme');
    llm.script({ toolCalls: [{ name: 'acme__add_tool', args: {} }] }, { text: 'added' }, { text: 'hi' });
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'add' });
    await w.next((f) => f.type === 'message', 30_000);
    expect(toolNames(llm.requests[0])).not.toContain('acme__fresh');
    await until(async () => (await serverReport(p, 'acme')).tools === 8, 'the new tool listed');
    w.send({ type: 'message', id: 'm2', text: 'hi' });
    await w.next((f) => f.type === 'message', 30_000);
    expect(toolNames(llm.requests[2])).toContain('acme__fresh');
  });

  it('the server killed mid-call: the turn ends honestly, Parley keeps answering, the server is restarted and works again', async () => {
    const fx = fixtureServer('acme');
    const { p, llm } = await parleyWith([fx.config]);
    await connected(p, 'acme');
    llm.script({ toolCalls: [{ name: 'acme__hang', args: {} }] }, { text: 'The tool is down, sorry.' });
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'hang' });
    const call = await until(() => fx.calls().find((c) => c.tool === 'hang'), 'the call to reach the server');
    process.kill(call.pid, 'SIGKILL');
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('The tool is down, sorry.');
    expect(toolMessage(llm.requests[1])).toMatch(/^Error \(disconnected\)/);

    // Parley answers meanwhile, and /ready stays 200 (degraded at most).
    llm.script({ text: 'Still here.' });
    w.send({ type: 'message', id: 'm2', text: 'are you there?' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('Still here.');
    expect((await fetch(`${p.url()}/ready`)).status).toBe(200);

    await until(async () => (await serverReport(p, 'acme'))?.connections === 2 && (await serverReport(p, 'acme')).connected, 'the server restarted');
    expect(fx.starts().map((s) => s.pid)).toHaveLength(2);
    llm.script({ toolCalls: [{ name: 'acme__lookup_plan', args: { customer: 'c-9' } }] }, (req) => ({ text: toolMessage(req) }));
    w.send({ type: 'message', id: 'm3', text: 'my plan?' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('Customer c-9 is on the Gold plan (renews 2027-01-31).');
  }, 120_000);

  it('a visitor (not signed in) is offered no MCP tool, and one the model names anyway never runs', async () => {
    const fx = fixtureServer('acme');
    const llm = await startFakeOpenAi();
    open.push(llm);
    const p = await startParley({
      config: {
        llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' },
        tools: { mcp: [fx.config] as never },
        identity: { jwt_secret: 'identity-secret-0123456789abcdef', visitors: true, allow_anonymous: false },
      },
    });
    open.push(p);
    await connected(p, 'acme');
    llm.script({ toolCalls: [{ name: 'acme__lookup_plan', args: { customer: 'c-1' } }] }, { text: 'Please sign in first.' });
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init' });
    const ready = await w.next((f) => f.type === 'ready', 30_000);
    expect(ready.customerId).toMatch(/^vis_/);
    w.send({ type: 'message', id: 'm1', text: 'what plan am I on?' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('Please sign in first.');
    expect((llm.requests[0].tools ?? []).map((t: any) => t.function.name).filter((n: string) => n.startsWith('acme__'))).toEqual([]);
    expect(toolMessage(llm.requests[1])).toMatch(/^Error \(sign_in_required\)/);
    expect(fx.calls()).toEqual([]);
  });

  it('a server that cannot start leaves Parley ready (degraded) and answering', async () => {
    const { p, llm } = await parleyWith([{ id: 'ghost', command: '/nonexistent/mcp-server' }]);
    const body = await until(async () => {
      const r = await ready(p);
      return r.checks.mcp.servers[0].lastError && r;
    }, 'the failure reported');
    expect(body.status).toBe('degraded');
    expect(body.checks.mcp.servers[0]).toMatchObject({ id: 'ghost', connected: false, tools: 0 });
    llm.script({ text: 'Hello!' });
    const w = await widget(p);
    w.send({ type: 'message', id: 'm1', text: 'hi' });
    expect((await w.next((f) => f.type === 'message', 30_000)).text).toBe('Hello!');
  });
});
