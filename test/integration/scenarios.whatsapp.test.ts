// Scenarios on `channel: whatsapp`: the customer writes through the real webhook path (Meta payloads signed with the
// app secret), answers confirmations with the Yes/No buttons, and reads what test mode's WhatsApp sender sent (the
// mock that stands for the Graph API). The demo backend is connected through the real SDK.
import { afterEach, describe, expect, it } from 'vitest';
import { startDemoBackend, type DemoFault } from '../../examples/demo-backend/backend.ts';
import { targetOf } from '../../src/scenarios/embedded.ts';
import { runScenario } from '../../src/scenarios/runner.ts';
import { Scenario } from '../../src/scenarios/schema.ts';
import { phoneFor } from '../../src/scenarios/whatsapp-session.ts';
import { startParley, TEST_SECRET } from '../support/parley.ts';
import { WA } from '../support/whatsapp.ts';

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function setUp(faults: DemoFault[] = []) {
  // The default graph_url in test mode: the mock sender, never Meta.
  const parley = await startParley({ config: { channels: { whatsapp: { enabled: true, provider: 'meta', ...WA } } } });
  started.push(parley);
  started.push(await startDemoBackend({ url: parley.url(), secret: TEST_SECRET, faults, testFunctions: true }));
  const deadline = Date.now() + 30_000;
  while (parley.runtime.hub.catalog().length < 3) {
    if (Date.now() > deadline) throw new Error('the demo backend did not connect');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { parley, target: targetOf(parley) };
}

const whatsapp = (externalId: string, steps: unknown[]) => Scenario.parse({ name: externalId, customer: { externalId, channel: 'whatsapp' }, steps });

describe('scenarios on WhatsApp', { timeout: 120_000 }, () => {
  it('cancel approved with the Yes button, status, a declined cancel and a handoff pass through the webhook path', async () => {
    const { parley, target } = await setUp();
    const cancel = whatsapp('wa-cancel', [
      { customer: 'Cancel order 1001' },
      { expect: { tool: 'cancelOrder', args: { orderId: '1001' }, confirmation: 'approve' } },
      { expect: { reply: { contains: 'cancelled' } } },
      { expect: { backend: { call: 'orderStateForTests', args: { orderId: '1001' }, contains: { status: 'cancelled' } } } },
      { customer: 'What is the status of order 1002?' },
      { expect: { tool: 'getOrderStatus', args: { orderId: '1002' } } },
      { expect: { reply: { contains: 'shipped' } } },
    ]);
    const declined = whatsapp('wa-decline', [
      { customer: 'Please cancel order 1003' },
      { expect: { tool: 'cancelOrder', args: { orderId: '1003' }, confirmation: 'decline' } },
      { expect: { reply: { contains: 'nothing was changed' } } },
      { expect: { backend: { call: 'orderStateForTests', args: { orderId: '1003' }, contains: { status: 'delivered' } } } },
    ]);
    const handoff = whatsapp('wa-handoff', [{ customer: 'I want to talk to a person' }, { expect: { tool: 'handoff', handoff: true } }]);
    const results = await Promise.all([cancel, declined, handoff].map((s) => runScenario(s, 'wa.scenario.yaml', target)));
    expect(results.map((r) => [r.name, r.status, r.differences])).toEqual([
      ['wa-cancel', 'passed', []],
      ['wa-decline', 'passed', []],
      ['wa-handoff', 'passed', []],
    ]);
    // It was WhatsApp: the conversation is the customer's WhatsApp one, and the buttons went to that number.
    expect(results[0].conversationId).toMatch(/^conv_whatsapp_/);
    const outbox = (await (await fetch(`${parley.url()}/__test__/whatsapp/outbox`)).json()) as { messages: { to: string; type: string }[] };
    const to = phoneFor('wa-cancel').replace('+', '');
    expect(outbox.messages.filter((m) => m.to.replace('+', '') === to).map((m) => m.type)).toEqual(['buttons', 'text', 'text']);
  });

  it('a broken backend fails the WhatsApp scenarios it breaks, with the diff', async () => {
    const { target } = await setUp(['cancel-noop', 'rename-status']);
    const r = await runScenario(
      whatsapp('wa-broken', [
        { customer: 'What is the status of order 1002?' },
        { expect: { tool: 'getOrderStatus', args: { orderId: '1002' } } },
        { customer: 'Cancel order 1001' },
        { confirm: 'approve' },
        { expect: { backend: { call: 'orderStateForTests', args: { orderId: '1001' }, contains: { status: 'cancelled' } } } },
      ]),
      'wa.scenario.yaml',
      target,
    );
    expect(r.status).toBe('failed');
    expect(r.differences.map((d) => [d.step, d.expected, d.happened.slice(0, 60)])).toEqual([
      [2, 'tool getOrderStatus with args ⊇ {"orderId":"1002"}', 'lookupOrder({"orderId":"1002"})'],
      [5, 'backend orderStateForTests({"orderId":"1001"}) ⊇ {"status":"cancelled"}', expect.stringContaining('"status":"processing"')],
    ]);
  });

  it('is skipped, with the reason, where WhatsApp cannot be driven (a running Parley)', async () => {
    const r = await runScenario(whatsapp('wa-url', [{ customer: 'hi' }]), 'wa.scenario.yaml', { url: 'http://127.0.0.1:1', secret: 'unused' });
    expect(r.status).toBe('skipped');
    expect(r.reason).toMatch(/embedded Parley only/);
  });
});
