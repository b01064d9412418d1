// The proactive runner (src/proactive/run-machine.ts) runs every request's steps on one shared inert scope, whose
// executor collects each step's actions. Requests in flight together must still see only their own actions: each
// reservation for its own input, each delivery once, for its own message, and none for a blocked request.
import { describe, expect, it } from 'vitest';
import type { ProactiveDeliverInput, ProactiveInput, ProactiveReservation, ProactiveReserveInput } from '../../machines/proactive.ts';
import { createProactiveRunner, type ProactiveEffects } from '../../src/proactive/run-machine.ts';

const input = (i: number, o: { optIn?: boolean; customer?: boolean } = {}): ProactiveInput => ({
  request: { customerExternalId: `ext-${i}`, channel: 'web', content: `hello ${i}`, dedupKey: `k${i}` },
  enabled: true,
  customer: o.customer === false ? undefined : { customerId: `cus_${i}`, externalId: `ext-${i}`, optIn: o.optIn ?? true },
});

/** Effects whose reservation settles only when the test says so, recording what each request was asked to do. */
function effects(outcome: ProactiveReservation | Error) {
  const seen = { reserve: [] as ProactiveReserveInput[], deliver: [] as ProactiveDeliverInput[] };
  let settle = () => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const e: ProactiveEffects = {
    async reserve(i) {
      seen.reserve.push(i);
      await settled;
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    deliver: (p) => void seen.deliver.push(p),
  };
  return { e, seen, settle: () => settle() };
}

describe('proactive runner', () => {
  it('keeps the actions of requests in flight together apart', async () => {
    const runner = createProactiveRunner();
    const a = effects({ ok: true, messageId: 'pm_a' });
    const b = effects({ ok: false, failed: 'duplicate' });
    const c = effects({ ok: true, messageId: 'pm_c' });
    const d = effects(new Error('store down'));
    const notOptedIn = effects({ ok: true, messageId: 'pm_never' });
    const unknown = effects({ ok: true, messageId: 'pm_never' });
    const runs = [
      runner.run(input(1), a.e),
      runner.run(input(2), b.e),
      runner.run(input(3), c.e),
      runner.run(input(4), d.e),
      runner.run(input(5, { optIn: false }), notOptedIn.e),
      runner.run(input(6, { customer: false }), unknown.e),
    ];
    // Settle in an order unlike the start order, so steps of different requests interleave.
    for (const x of [c, d, a, b]) {
      x.settle();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const results = await Promise.all(runs);
    expect(results.map((r) => [r.state, r.output])).toEqual([
      ['accepted', { accepted: true, messageId: 'pm_a' }],
      ['blocked', { accepted: false, reason: 'Duplicate (dedupKey already sent)' }],
      ['accepted', { accepted: true, messageId: 'pm_c' }],
      ['failed', { accepted: false, reason: 'Guardrail check failed: store down' }],
      ['blocked', { accepted: false, reason: 'Customer has not opted in' }],
      ['blocked', { accepted: false, reason: 'Unknown customer' }],
    ]);
    expect(a.seen.reserve.map((r) => [r.customerId, r.dedupKey, r.request.content])).toEqual([['cus_1', 'k1', 'hello 1']]);
    expect(c.seen.reserve.map((r) => [r.customerId, r.dedupKey, r.request.content])).toEqual([['cus_3', 'k3', 'hello 3']]);
    expect(a.seen.deliver).toEqual([expect.objectContaining({ messageId: 'pm_a', request: expect.objectContaining({ content: 'hello 1' }) })]);
    expect(c.seen.deliver).toEqual([expect.objectContaining({ messageId: 'pm_c', request: expect.objectContaining({ content: 'hello 3' }) })]);
    for (const x of [b, d]) expect(x.seen.deliver).toEqual([]);
    for (const x of [notOptedIn, unknown]) expect(x.seen).toEqual({ reserve: [], deliver: [] });
  });

  it('runs request after request on one runner, each with its own reservation and delivery', async () => {
    const runner = createProactiveRunner();
    for (let i = 0; i < 5; i++) {
      const x = effects({ ok: true, messageId: `pm_${i}` });
      x.settle();
      const r = await runner.run(input(i), x.e);
      expect(r.output).toEqual({ accepted: true, messageId: `pm_${i}` });
      expect(x.seen.reserve).toHaveLength(1);
      expect(x.seen.deliver.map((p) => p.messageId)).toEqual([`pm_${i}`]);
    }
  });
});
