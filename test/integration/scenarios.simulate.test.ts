// Simulated customers and judged criteria: a model (here a local OpenAI-compatible fake) plays the customer until its
// goal is reached, and grades the conversation; the expectations are checked on what happened.
import { afterEach, describe, expect, it } from 'vitest';
import { startDemoBackend } from '../../examples/demo-backend/backend.ts';
import { targetOf } from '../../src/scenarios/embedded.ts';
import { createScenarioModel, GOAL_REACHED } from '../../src/scenarios/model.ts';
import { runScenario } from '../../src/scenarios/runner.ts';
import { Scenario } from '../../src/scenarios/schema.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET } from '../support/parley.ts';

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

/** The fake model: a customer who asks about order 1002 until told it shipped; a judge with the given verdict. */
function scriptModel(fake: FakeOpenAi, verdict: boolean) {
  fake.fallback((body: { messages: { role: string; content: string }[] }) => {
    const [system, user] = body.messages.map((m) => m.content);
    if (system.includes('grade')) return { text: JSON.stringify({ pass: verdict, reason: verdict ? 'it said so' : 'it never mentioned a date' }) };
    return { text: user.includes('shipped') ? GOAL_REACHED : 'Where is my order 1002?' };
  });
}

async function setUp() {
  const fake = await startFakeOpenAi();
  started.push(fake);
  const parley = await startParley();
  started.push(parley);
  started.push(await startDemoBackend({ url: parley.url(), secret: TEST_SECRET }));
  const deadline = Date.now() + 20_000;
  while (parley.runtime.hub.catalog().length < 2) {
    if (Date.now() > deadline) throw new Error('the demo backend did not connect');
    await new Promise((r) => setTimeout(r, 50));
  }
  const target = { ...targetOf(parley), model: createScenarioModel({ base_url: fake.url, model: 'fake-customer', temperature: 0 }) };
  return { fake, target };
}

const scenario = Scenario.parse({
  name: 'a worried customer finds out where the order is',
  customer: { externalId: 'sim-1' },
  simulate: { persona: 'a worried customer', goal: 'find out where order 1002 is', max_turns: 4 },
  expect: [{ tool: 'getOrderStatus', args: { orderId: '1002' } }, { reply: { contains: 'shipped' } }],
  judge: ['the assistant tells the customer the order has shipped'],
});

describe('simulated customers', { timeout: 120_000 }, () => {
  it('play the customer until the goal is reached; expectations and the judge are checked on what happened', async () => {
    const { fake, target } = await setUp();
    scriptModel(fake, true);
    const r = await runScenario(scenario, 'sim.scenario.yaml', target);
    expect(r.differences).toEqual([]);
    expect(r.status).toBe('passed');
    // One customer message, then the goal was reached; then one judge call.
    const customerCalls = fake.requests.filter((q) => !q.messages[0].content.includes('grade'));
    expect(customerCalls).toHaveLength(2);
    expect(customerCalls[1].messages[1].content).toContain('Order 1002 is shipped');
  });

  it('fail with the judge’s reason when the judge says no', async () => {
    const { fake, target } = await setUp();
    scriptModel(fake, false);
    const r = await runScenario({ ...scenario, customer: { ...scenario.customer, externalId: 'sim-2' } }, 'sim.scenario.yaml', target);
    expect(r.status).toBe('failed');
    expect(r.differences).toEqual([
      { step: 'end', expected: 'judge: the assistant tells the customer the order has shipped', happened: 'it never mentioned a date' },
    ]);
  });
});
