import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, toPromise } from 'xstate';
import {
  BLOCK_REASONS,
  proactiveMachine,
  type ProactiveCustomerFacts,
  type ProactiveDeliverInput,
  type ProactiveRequest,
  type ProactiveReservation,
  type ProactiveReserveInput,
} from '../../machines/proactive.ts';
import { createManualClock, xstateClock } from '../../src/clock.ts';

const CHECKS = ['checkEnabled', 'checkCustomer', 'checkAddress', 'checkOptIn', 'checkDuplicate', 'checkCap', 'checkWindow'];

const optedIn: ProactiveCustomerFacts = { customerId: 'cus_1', externalId: 'ext-1', phone: '+15550001', optIn: true, lastInboundAt: { whatsapp: 1 } };

interface Fakes {
  customer?: ProactiveCustomerFacts;
  reservation?: ProactiveReservation;
  reserveError?: string;
  whatsappEnabled?: boolean;
}

async function run(request: Partial<ProactiveRequest>, fakes: Fakes = {}, enabled = true) {
  const calls = { reserve: [] as ProactiveReserveInput[], deliver: [] as ProactiveDeliverInput[] };
  const machine = proactiveMachine.provide({
    actors: {
      reserve: fromPromise<ProactiveReservation, ProactiveReserveInput>(async ({ input }) => {
        calls.reserve.push(input);
        if (fakes.reserveError) throw new Error(fakes.reserveError);
        return fakes.reservation ?? { ok: true, messageId: 'pm_test' };
      }),
    },
    actions: {
      deliver: (_, params: ProactiveDeliverInput) => void calls.deliver.push(params),
    },
  });
  const visited: string[] = [];
  const customer = 'customer' in fakes ? fakes.customer : optedIn;
  const actor = createActor(machine, {
    input: {
      request: { customerExternalId: 'ext-1', channel: 'whatsapp', content: 'hi', ...request },
      enabled,
      customer,
      whatsappEnabled: fakes.whatsappEnabled,
    },
    clock: xstateClock(createManualClock()),
    inspect: (e) => {
      if (e.type !== '@xstate.snapshot' && e.type !== '@xstate.microstep') return;
      // A microstep names the states its transitions left (this is how the initial
      // state and eventless passes through a state show up), then the state reached.
      const seen = (v: unknown) => typeof v === 'string' && visited[visited.length - 1] !== v && visited.push(v);
      if (e.type === '@xstate.microstep') for (const t of e._transitions) seen(t.source.key);
      seen((e.snapshot as { value?: unknown }).value);
    },
  });
  const done = toPromise(actor);
  actor.start();
  const output = await done;
  return { output, visited, calls, final: actor.getSnapshot().value };
}

describe('proactive machine', () => {
  it('accepts after visiting every check in order, and delivers with the reserved messageId', async () => {
    const r = await run({ dedupKey: 'k1' });
    expect(r.output).toEqual({ accepted: true, messageId: 'pm_test' });
    expect(r.visited).toEqual([...CHECKS, 'sending', 'accepted']);
    expect(r.calls.reserve).toEqual([
      expect.objectContaining({
        customerId: 'cus_1',
        channel: 'whatsapp',
        dedupKey: 'k1',
        hasTemplate: false,
        lastInboundAt: { whatsapp: 1 },
        customer: expect.objectContaining({ customerId: 'cus_1' }),
        request: expect.objectContaining({ dedupKey: 'k1' }),
      }),
    ]);
    expect(r.calls.deliver).toHaveLength(1);
    expect(r.calls.deliver[0].messageId).toBe('pm_test');
    expect(r.calls.deliver[0].customer.customerId).toBe('cus_1');
    expect(r.calls.deliver[0].request.content).toBe('hi');
  });

  it('passes hasTemplate to reserve when a template is given', async () => {
    const r = await run({ template: { name: 'followup', language: 'en' } });
    expect(r.calls.reserve[0].hasTemplate).toBe(true);
  });

  const blockedCases: Array<{ name: string; reason: string; stopAt: string; request?: Partial<ProactiveRequest>; fakes?: Fakes; enabled?: boolean }> = [
    { name: 'disabled', reason: BLOCK_REASONS.disabled, stopAt: 'checkEnabled', enabled: false },
    { name: 'unknown customer', reason: BLOCK_REASONS.unknownCustomer, stopAt: 'checkCustomer', fakes: { customer: undefined } },
    { name: 'whatsapp without phone', reason: BLOCK_REASONS.noAddress, stopAt: 'checkAddress', fakes: { customer: { ...optedIn, phone: undefined } } },
    { name: 'whatsapp channel disabled', reason: BLOCK_REASONS.noAddress, stopAt: 'checkAddress', fakes: { whatsappEnabled: false } },
    { name: 'not opted in (unset)', reason: BLOCK_REASONS.notOptedIn, stopAt: 'checkOptIn', fakes: { customer: { ...optedIn, optIn: undefined } } },
    { name: 'opted out', reason: BLOCK_REASONS.notOptedIn, stopAt: 'checkOptIn', fakes: { customer: { ...optedIn, optIn: false } } },
    { name: 'duplicate', reason: BLOCK_REASONS.duplicate, stopAt: 'checkDuplicate', fakes: { reservation: { ok: false, failed: 'duplicate' } } },
    { name: 'cap', reason: BLOCK_REASONS.cap, stopAt: 'checkCap', fakes: { reservation: { ok: false, failed: 'cap' } } },
    { name: 'window', reason: BLOCK_REASONS.window, stopAt: 'checkWindow', fakes: { reservation: { ok: false, failed: 'window' } } },
  ];

  for (const c of blockedCases) {
    it(`blocks (${c.name}) in ${c.stopAt} with "${c.reason}"`, async () => {
      const r = await run(c.request ?? {}, c.fakes, c.enabled);
      expect(r.output).toEqual({ accepted: false, reason: c.reason });
      expect(r.final).toBe('blocked');
      expect(r.visited).toEqual([...CHECKS.slice(0, CHECKS.indexOf(c.stopAt) + 1), 'blocked']);
      expect(r.calls.deliver).toHaveLength(0);
    });
  }

  it('does not reserve when an earlier check blocks', async () => {
    const disabled = await run({}, {}, false);
    expect(disabled.calls.reserve).toHaveLength(0);
    const notOpted = await run({}, { customer: { ...optedIn, optIn: false } });
    expect(notOpted.calls.reserve).toHaveLength(0);
  });

  it('a disabled WhatsApp channel does not block the web channel', async () => {
    const r = await run({ channel: 'web' }, { whatsappEnabled: false });
    expect(r.output).toEqual({ accepted: true, messageId: 'pm_test' });
  });

  it('a web customer is addressable by customerId (no phone, no email needed)', async () => {
    const r = await run({ channel: 'web' }, { customer: { customerId: 'cus_w', externalId: 'ext-w', optIn: true } });
    expect(r.output).toEqual({ accepted: true, messageId: 'pm_test' });
  });

  it('the reason strings are exactly the interface ones', () => {
    expect(Object.values(BLOCK_REASONS)).toEqual([
      'Proactive messaging is disabled',
      'Unknown customer',
      'No channel address',
      'Customer has not opted in',
      'Duplicate (dedupKey already sent)',
      'Daily proactive limit reached',
      'Outside 24h window — a template message is required',
    ]);
  });

  it('a reserve that throws ends in failed (an internal error), not blocked, and delivers nothing', async () => {
    const r = await run({}, { reserveError: 'tx aborted' });
    expect(r.final).toBe('failed');
    expect(r.output).toEqual({ accepted: false, reason: 'Guardrail check failed: tx aborted' });
    expect(r.visited).toEqual([...CHECKS.slice(0, CHECKS.indexOf('checkDuplicate') + 1), 'failed']);
    expect(r.calls.deliver).toHaveLength(0);
  });

  it('without provided actors it fails instead of accepting', async () => {
    const actor = createActor(proactiveMachine, {
      input: { request: { customerExternalId: 'x', channel: 'web', content: 'c' }, enabled: true, customer: optedIn },
    });
    const done = toPromise(actor);
    actor.start();
    const out = await done;
    expect(out.accepted).toBe(false);
    expect(actor.getSnapshot().value).toBe('failed');
  });
});
