// From a real conversation to a test: a conversation had over the widget protocol with the demo backend (through the
// real SDK) is exported from the store as a scenario (`parley test export`), and that scenario replays green against a
// fresh Parley; the same scenario fails when the backend no longer does what the conversation showed.
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startDemoBackend } from '../../examples/demo-backend/backend.ts';
import { exportCommand, scenarioFrom, scenarioYaml } from '../../src/scenarios/export.ts';
import { storedHistory } from '../../src/conversations/tool-calls.ts';
import { targetOf } from '../../src/scenarios/embedded.ts';
import { runScenario } from '../../src/scenarios/runner.ts';
import { Scenario } from '../../src/scenarios/schema.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function parleyWithDemo(faults: ('cancel-noop' | 'rename-status')[] = []): Promise<TestParley> {
  const parley = await startParley();
  started.push(parley);
  const backend = await startDemoBackend({ url: parley.url(), secret: TEST_SECRET, faults });
  started.push(backend);
  const deadline = Date.now() + 20_000;
  while (parley.runtime.hub.catalog().length < 2) {
    if (Date.now() > deadline) throw new Error('the demo backend did not connect');
    await new Promise((r) => setTimeout(r, 50));
  }
  return parley;
}

async function realConversation(parley: TestParley): Promise<string> {
  const w = await startWidgetSession(parley.url(), { customerId: 'real-1', email: 'real-1@example.com' });
  try {
    const conversationId = w.frames.find((f) => f.type === 'ready')!.conversationId as string;
    w.send({ type: 'message', id: 'm1', text: 'What is the status of order 1002?' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', 20_000);
    w.send({ type: 'message', id: 'm2', text: 'Cancel order 1001' });
    const card = await w.next((f) => f.type === 'confirm', 20_000);
    w.send({ type: 'confirm', id: card.id, approve: true });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', 20_000);
    w.send({ type: 'message', id: 'm3', text: 'Cancel order 1003' });
    const second = await w.next((f) => f.type === 'confirm', 20_000);
    w.send({ type: 'confirm', id: second.id, approve: false });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', 20_000);
    return conversationId;
  } finally {
    w.close();
  }
}

describe('exporting a real conversation as a scenario', { timeout: 120_000 }, () => {
  it('writes its customer lines as steps and what the assistant did as expectations, and replays green', async () => {
    const original = await parleyWithDemo();
    const conversationId = await realConversation(original);
    const record = await original.services.store.conversations.get(conversationId);
    const yaml = scenarioYaml(scenarioFrom(record!, await storedHistory(original.services.store.history, conversationId)));
    expect(yaml.split('\n')[0]).toMatch(/^# yaml-language-server: \$schema=/);
    const scenario = Scenario.parse(parse(yaml));
    expect(scenario.steps).toEqual([
      { customer: 'What is the status of order 1002?' },
      { expect: { tool: 'getOrderStatus', args: { orderId: '1002' } } },
      { expect: { reply: { contains: expect.stringContaining('Order 1002 is shipped') } } },
      { customer: 'Cancel order 1001' },
      { expect: { tool: 'cancelOrder', args: { orderId: '1001' }, confirmation: 'approve' } },
      { expect: { reply: { contains: 'Order 1001 is cancelled.' } } },
      { customer: 'Cancel order 1003' },
      { expect: { tool: 'cancelOrder', confirmation: 'decline' } },
      { expect: { reply: { contains: expect.stringContaining('nothing was changed') } } },
    ]);

    // `parley test export <id>` reads the same store once Parley has stopped, and writes the same scenario.
    await original.close();
    let out = '';
    const code = await exportCommand([conversationId], undefined, {
      out: (t) => (out += t),
      err: (t) => (out += t),
      loadConfig: () => original.services.config,
    });
    expect(code).toBe(0);
    expect(out).toBe(yaml);
    expect(await exportCommand(['conv_nope'], undefined, { out: () => undefined, err: () => undefined, loadConfig: () => original.services.config })).toBe(1);

    const fresh = await parleyWithDemo();
    const result = await runScenario(scenario, 'exported.scenario.yaml', targetOf(fresh));
    expect(result.differences).toEqual([]);
    expect(result.status).toBe('passed');

    const broken = await parleyWithDemo(['rename-status']);
    const failed = await runScenario(scenario, 'exported.scenario.yaml', targetOf(broken));
    expect(failed.status).toBe('failed');
    expect(failed.differences[0]).toEqual({
      step: 2,
      expected: 'tool getOrderStatus with args ⊇ {"orderId":"1002"}',
      happened: 'lookupOrder({"orderId":"1002"})',
    });
  });
});
