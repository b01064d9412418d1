// The matchers behind a scenario's diffs, and what a scenario that needs a model becomes without one.
import { describe, expect, it } from 'vitest';
import { checkLocal, checkReply, isSubset } from '../../src/scenarios/expectations.ts';
import type { Observed } from '../../src/scenarios/observed.ts';
import { runScenario } from '../../src/scenarios/runner.ts';
import { Scenario } from '../../src/scenarios/schema.ts';

const observed = (o: Partial<Observed>): Observed => ({ tools: [], replies: [], sources: [], proactive: [], confirmations: [], handoff: false, ...o });

describe('scenario expectations', () => {
  it('arguments are a subset; numbers and strings compare as text', () => {
    expect(isSubset({ orderId: '1001' }, { orderId: 1001, reason: 'x' })).toBe(true);
    expect(isSubset({ orderId: '1001' }, { orderId: '1002' })).toBe(false);
    expect(isSubset({ a: { b: 1 } }, { a: { b: 1, c: 2 } })).toBe(true);
    expect(isSubset({ a: 1 }, undefined)).toBe(false);
  });

  it('tool expectations match in order and name the difference', () => {
    const o = observed({
      tools: [
        { name: 'getOrderStatus', args: { orderId: '1' } },
        { name: 'cancelOrder', args: { orderId: '1' } },
      ],
    });
    const cursor = { tool: 0 };
    expect(checkLocal({ tool: 'getOrderStatus' }, o, cursor)).toEqual([]);
    expect(checkLocal({ tool: 'cancelOrder', args: { orderId: '1' } }, o, cursor)).toEqual([]);
    const late = checkLocal({ tool: 'getOrderStatus' }, o, cursor);
    expect(late).toHaveLength(1);
    expect(late[0].happened).toMatch(/before the tool expected just ahead of it/);
    expect(checkLocal({ tool: 'cancelOrder', args: { orderId: '2' } }, o, { tool: 0 })).toEqual([
      { expected: 'tool cancelOrder with args ⊇ {"orderId":"2"}', happened: 'cancelOrder was called with {"orderId":"1"}' },
    ]);
    expect(checkLocal({ no_tool: true }, observed({}), { tool: 0 })).toEqual([]);
  });

  it('replies: contains, matches and not_contains, case-insensitive', () => {
    expect(checkReply('reply', { contains: 'CANCELLED' }, ['Order 1 is cancelled.'])).toEqual([]);
    expect(checkReply('reply', { matches: 'order \\d+ is' }, ['Order 1 is cancelled.'])).toEqual([]);
    expect(checkReply('reply', { not_contains: 'sorry' }, ['Sorry, that failed'])).toEqual([
      { expected: 'reply does not contain "sorry"', happened: 'reply: "Sorry, that failed"' },
    ]);
    expect(checkReply('reply', { contains: 'x' }, [])).toEqual([{ expected: 'reply contains "x"', happened: 'no reply' }]);
  });

  it('handoff and confirmations', () => {
    expect(checkLocal({ handoff: true }, observed({}), { tool: 0 })).toEqual([{ expected: 'handed to a person', happened: 'the assistant kept it' }]);
    expect(checkLocal({ confirmation: 'asked', tool: 'cancelOrder' }, observed({}), { tool: 0 }).map((d) => d.happened)).toEqual([
      'no tool call',
      'no confirmation was asked',
    ]);
  });

  it('a scenario with simulate or judge is skipped, with the reason, when no model is configured', async () => {
    const target = { url: 'http://127.0.0.1:1', secret: 'unused' }; // never reached: nothing runs without a model
    const simulated = Scenario.parse({ name: 's', customer: { externalId: 'c' }, simulate: { persona: 'p', goal: 'g' } });
    const judged = Scenario.parse({ name: 'j', customer: { externalId: 'c' }, steps: [{ customer: 'hi' }], judge: ['is polite'] });
    const stepJudge = Scenario.parse({ name: 'k', customer: { externalId: 'c' }, steps: [{ customer: 'hi' }, { expect: { judge: 'is polite' } }] });
    for (const s of [simulated, judged, stepJudge]) {
      const r = await runScenario(s, 'f', target);
      expect(r.status).toBe('skipped');
      expect(r.reason).toMatch(/needs a model/);
    }
  });
});
