// Issue 37, part 2: write and destructive MCP tools wait for the customer's confirmation on WhatsApp too (Yes / No
// buttons, or a typed answer), through the same conversation path as SDK functions; the fixture server's own call log
// shows what ran.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeGraph } from '../support/fake-graph.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { fixtureServer, until as waitFor } from '../support/mcp.ts';
import { startParley } from '../support/parley.ts';
import { buttonReply, postWebhook, textMessage, until, WA, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('MCP tools on WhatsApp', () => {
  it('a write tool runs once after Yes; a destructive one declined by a typed "No" never runs', async () => {
    const graph = await startFakeGraph();
    open.push(graph);
    const llm = await startFakeOpenAi();
    open.push(llm);
    const fx = fixtureServer('acme');
    const p = await startParley({
      config: {
        llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', api_key: 'k' },
        tools: { mcp: [fx.config] as never },
        channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA } },
      },
    });
    open.push(p);
    await waitFor(() => p.runtime.mcp.report()[0].connected, 'the fixture server connected');
    llm.script(
      { toolCalls: [{ name: 'acme__update_note', args: { note: 'call back Monday' } }] },
      { text: 'Saved your note.' },
      { toolCalls: [{ name: 'acme__close_account', args: { customer: 'c-1' } }] },
      { text: 'Your account stays open.' },
    );
    const phone = '+15550004444';
    await postWebhook(p.url(), webhookBody([textMessage(phone, 'note: call back Monday')]));
    const [prompt] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
      30_000,
    );
    expect(prompt.body.type).toBe('interactive');
    const buttons = prompt.body.interactive.action.buttons as { reply: { id: string; title: string } }[];
    expect(fx.calls()).toEqual([]);
    await postWebhook(p.url(), webhookBody([buttonReply(phone, buttons[0].reply.id, 'Yes')]));
    const sent = await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
      30_000,
    );
    expect(sent[1].body.text.body).toBe('Saved your note.');
    expect(fx.calls().map((c) => [c.tool, c.args])).toEqual([['update_note', { note: 'call back Monday' }]]);

    await postWebhook(p.url(), webhookBody([textMessage(phone, 'close my account')]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 3,
      30_000,
    );
    await postWebhook(p.url(), webhookBody([textMessage(phone, 'No')]));
    const after = await until(
      () => graph.delivered(),
      (d) => d.length >= 4,
      30_000,
    );
    expect(after[3].body.text.body).toBe('Your account stays open.');
    expect(fx.calls().map((c) => c.tool)).toEqual(['update_note']);
  }, 120_000);
});
