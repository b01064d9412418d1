import { afterEach, describe, expect, it } from 'vitest';
import { BLOCK_REASONS } from '../../machines/proactive.ts';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { createCustomerRepo, type CustomerRepo } from '../../src/customers/repo.ts';
import { createProactiveLedger } from '../../src/proactive/ledger.ts';
import {
  createProactiveService,
  OptInRequestSchema,
  ProactiveRequestSchema,
  ProactiveUnavailableError,
  type ProactiveDeliverArgs,
} from '../../src/proactive/service.ts';
import type { Store, StoreRepos } from '../../src/store/repos.ts';
import type { NewEvent } from '../../src/telemetry/types.ts';
import { openTestStore } from '../support/store.ts';
import { tempDir } from '../support/tmp.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const START = Date.UTC(2025, 0, 1);

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function setup(opts: { dailyCap?: number; dedupWindowHours?: number; path?: string; clock?: ManualClock } = {}) {
  const path = opts.path ?? tempDir();
  const store = await openTestStore(path);
  open.push(store);
  const clock = opts.clock ?? createManualClock(START);
  const customers = createCustomerRepo(store, clock);
  const ledger = createProactiveLedger({ store, clock, dailyCap: opts.dailyCap ?? 3, dedupWindowHours: opts.dedupWindowHours ?? 24 });
  return { path, store, clock, customers, ledger };
}

async function whatsappCustomer(customers: CustomerRepo, clock: ManualClock, lastInboundAgoMs?: number) {
  const c = await customers.upsert({ externalId: 'ext-wa', phone: '+15550001' });
  if (lastInboundAgoMs !== undefined) await customers.touchInbound(c.customerId, 'whatsapp', clock.now() - lastInboundAgoMs);
  return c;
}

const web = (customerId: string, dedupKey?: string) => ({ customerId, channel: 'web' as const, dedupKey, hasTemplate: false });

describe('proactive ledger (real LMDB)', () => {
  it('blocks a dedupKey already sent within the window, allows it again after the window', async () => {
    const { ledger, clock } = await setup({ dailyCap: 100, dedupWindowHours: 2 });
    const first = await ledger.reserve(web('cus_a', 'promo-1'));
    expect(first.ok).toBe(true);
    if (first.ok) expect(first.messageId).toMatch(/^pm_[0-9a-f-]{36}$/);
    clock.advance(2 * HOUR - 1);
    expect(await ledger.reserve(web('cus_a', 'promo-1'))).toEqual({ ok: false, failed: 'duplicate' });
    expect((await ledger.reserve(web('cus_b', 'promo-1'))).ok).toBe(true); // per customer
    expect((await ledger.reserve(web('cus_a', 'promo-2'))).ok).toBe(true); // per key
    clock.advance(1);
    expect((await ledger.reserve(web('cus_a', 'promo-1'))).ok).toBe(true);
    // The re-send restarts the window.
    expect(await ledger.reserve(web('cus_a', 'promo-1'))).toEqual({ ok: false, failed: 'duplicate' });
  });

  it('a blocked attempt records nothing: the key stays free after a cap block', async () => {
    const { ledger, clock } = await setup({ dailyCap: 1 });
    expect((await ledger.reserve(web('cus_a', 'x'))).ok).toBe(true);
    expect(await ledger.reserve(web('cus_a', 'y'))).toEqual({ ok: false, failed: 'cap' });
    clock.advance(24 * HOUR + 1);
    expect((await ledger.reserve(web('cus_a', 'y'))).ok).toBe(true);
  });

  it('daily cap: 3 of 3 accepted, the 4th blocked; a send older than 24 h no longer counts', async () => {
    const { ledger, clock } = await setup({ dailyCap: 3 });
    expect((await ledger.reserve(web('cus_a'))).ok).toBe(true);
    clock.advance(HOUR);
    expect((await ledger.reserve(web('cus_a'))).ok).toBe(true);
    expect((await ledger.reserve(web('cus_a'))).ok).toBe(true);
    expect(await ledger.sentInWindow('cus_a')).toBe(3);
    expect(await ledger.reserve(web('cus_a'))).toEqual({ ok: false, failed: 'cap' });
    expect((await ledger.reserve(web('cus_other'))).ok).toBe(true); // per customer
    clock.advance(23 * HOUR - 1); // the first send is 24 h - 1 ms old: still counts
    expect(await ledger.reserve(web('cus_a'))).toEqual({ ok: false, failed: 'cap' });
    clock.advance(1); // exactly 24 h old: out of the window
    expect(await ledger.sentInWindow('cus_a')).toBe(2);
    expect((await ledger.reserve(web('cus_a'))).ok).toBe(true);
    expect(await ledger.reserve(web('cus_a'))).toEqual({ ok: false, failed: 'cap' });
  });

  it('a block decided on committed data takes no write transaction; a pass does', async () => {
    const { store, clock } = await setup();
    let transactions = 0;
    const counting: Store = Object.assign({}, store, { transaction: <T>(fn: (tx: StoreRepos) => Promise<T>) => (transactions++, store.transaction(fn)) });
    const ledger = createProactiveLedger({ store: counting, clock, dailyCap: 2, dedupWindowHours: 24 });
    expect((await ledger.reserve(web('cus_a', 'k'))).ok).toBe(true);
    expect(transactions).toBe(1);
    expect(await ledger.reserve(web('cus_a', 'k'))).toEqual({ ok: false, failed: 'duplicate' });
    expect((await ledger.reserve(web('cus_a', 'k2'))).ok).toBe(true);
    expect(await ledger.reserve(web('cus_a', 'k3'))).toEqual({ ok: false, failed: 'cap' });
    expect(transactions).toBe(2);
  });

  it('daily_cap 0 blocks every send', async () => {
    const { ledger } = await setup({ dailyCap: 0 });
    expect(await ledger.reserve(web('cus_a'))).toEqual({ ok: false, failed: 'cap' });
  });

  it('duplicate is checked before the cap', async () => {
    const { ledger } = await setup({ dailyCap: 1 });
    expect((await ledger.reserve(web('cus_a', 'k'))).ok).toBe(true);
    expect(await ledger.reserve(web('cus_a', 'k'))).toEqual({ ok: false, failed: 'duplicate' });
  });

  it('whatsapp window: last inbound 23h59m ago passes, 24h01m ago is blocked, never inbound is blocked', async () => {
    const { ledger, customers, clock } = await setup({ dailyCap: 100 });
    const c = await whatsappCustomer(customers, clock);
    const wa = { customerId: c.customerId, channel: 'whatsapp' as const, hasTemplate: false };
    expect(await ledger.reserve(wa)).toEqual({ ok: false, failed: 'window' });
    await customers.touchInbound(c.customerId, 'whatsapp', clock.now() - (23 * HOUR + 59 * MIN));
    expect((await ledger.reserve(wa)).ok).toBe(true);
    clock.advance(2 * MIN); // now 24h01m since the inbound
    expect(await ledger.reserve(wa)).toEqual({ ok: false, failed: 'window' });
    // The web channel has no window.
    expect((await ledger.reserve({ ...wa, channel: 'web' })).ok).toBe(true);
  });

  it('the cap is decided before the window: a capped customer outside the window is blocked by the cap', async () => {
    const { ledger, customers, clock } = await setup({ dailyCap: 1 });
    const c = await whatsappCustomer(customers, clock, 30 * HOUR);
    expect((await ledger.reserve({ customerId: c.customerId, channel: 'whatsapp', hasTemplate: true })).ok).toBe(true);
    expect(await ledger.reserve({ customerId: c.customerId, channel: 'whatsapp', hasTemplate: false })).toEqual({ ok: false, failed: 'cap' });
  });

  it('whatsapp window: a template always passes', async () => {
    const { ledger, customers, clock } = await setup();
    const never = await whatsappCustomer(customers, clock);
    expect((await ledger.reserve({ customerId: never.customerId, channel: 'whatsapp', hasTemplate: true })).ok).toBe(true);
    await customers.touchInbound(never.customerId, 'whatsapp', clock.now() - 30 * 24 * HOUR);
    expect((await ledger.reserve({ customerId: never.customerId, channel: 'whatsapp', hasTemplate: true })).ok).toBe(true);
  });

  it('the window reads the stored customer record, not the caller', async () => {
    const { ledger, customers, clock } = await setup();
    const c = await whatsappCustomer(customers, clock, 30 * HOUR);
    const claimed = { whatsapp: clock.now() - MIN };
    expect(await ledger.reserve({ customerId: c.customerId, channel: 'whatsapp', hasTemplate: false, lastInboundAt: claimed })).toEqual({
      ok: false,
      failed: 'window',
    });
  });

  it('200 concurrent reserves with the same dedupKey: exactly one passes', async () => {
    const { ledger } = await setup({ dailyCap: 1000 });
    const results = await Promise.all(Array.from({ length: 200 }, () => ledger.reserve(web('cus_a', 'same'))));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.failed === 'duplicate')).toHaveLength(199);
    expect(await ledger.sentInWindow('cus_a')).toBe(1);
  });

  it('100 concurrent distinct reserves: exactly dailyCap pass', async () => {
    const { ledger } = await setup({ dailyCap: 3 });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => ledger.reserve(web('cus_a', `k${i}`))));
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(3);
    expect(new Set(ok.map((r) => (r.ok ? r.messageId : ''))).size).toBe(3);
    expect(results.filter((r) => !r.ok && r.failed === 'cap')).toHaveLength(97);
  });

  it('cap and dedup keys survive closing and reopening the store', async () => {
    const clock = createManualClock(START);
    const first = await setup({ dailyCap: 2, clock });
    expect((await first.ledger.reserve(web('cus_a', 'k1'))).ok).toBe(true);
    expect((await first.ledger.reserve(web('cus_a', 'k2'))).ok).toBe(true);
    await first.store.close();
    open.splice(open.indexOf(first.store), 1);

    const again = await setup({ dailyCap: 5, clock, path: first.path });
    expect(await again.ledger.sentInWindow('cus_a')).toBe(2);
    expect(await again.ledger.reserve(web('cus_a', 'k1'))).toEqual({ ok: false, failed: 'duplicate' });
    await again.store.close();
    open.splice(open.indexOf(again.store), 1);

    const capped = await setup({ dailyCap: 2, clock, path: first.path });
    expect(await capped.ledger.reserve(web('cus_a', 'k3'))).toEqual({ ok: false, failed: 'cap' });
  });

  it('prune removes only entries no window needs', async () => {
    const { ledger, clock, store } = await setup({ dailyCap: 10, dedupWindowHours: 48 });
    await ledger.reserve(web('cus_a', 'old'));
    await ledger.reserve(web('cus_b', 'old'));
    clock.advance(25 * HOUR);
    await ledger.reserve(web('cus_a', 'new'));
    // 2 old sent entries are past the 24 h cap window; no dedup entry is past 48 h.
    expect(await ledger.prune()).toBe(2);
    expect(await ledger.reserve(web('cus_a', 'old'))).toEqual({ ok: false, failed: 'duplicate' });
    clock.advance(24 * HOUR);
    // Now: the 2 'old' dedup entries (49 h) and the 'new' sent entry (24 h) go; 'new' dedup (24 h < 48 h) stays.
    expect(await ledger.prune()).toBe(3);
    // Only the 'new' dedup entry is left: no send counts for anyone, the 'old' keys are free.
    expect(await store.proactive.dedupSentAt('cus_a', 'new')).toBe(clock.now() - 24 * HOUR);
    expect(await store.proactive.dedupSentAt('cus_a', 'old')).toBeUndefined();
    expect(await store.proactive.dedupSentAt('cus_b', 'old')).toBeUndefined();
    expect(await store.proactive.countSentAfter('cus_a', 0)).toBe(0);
    expect(await store.proactive.countSentAfter('cus_b', 0)).toBe(0);
    expect(await ledger.prune()).toBe(0);
  });
});

describe('proactive service (real ledger, real customer repo)', () => {
  async function service(opts: { enabled?: boolean; dailyCap?: number; deliverError?: string } = {}) {
    const env = await setup({ dailyCap: opts.dailyCap ?? 3 });
    const delivered: ProactiveDeliverArgs[] = [];
    const events: NewEvent[] = [];
    let enabled = opts.enabled ?? true;
    const svc = createProactiveService({
      store: env.store,
      clock: env.clock,
      customers: env.customers,
      ledger: env.ledger,
      enabled: () => enabled,
      deliver: {
        prepare: async (_tx, args) => {
          if (opts.deliverError) throw new Error(opts.deliverError);
          return () => void delivered.push(args);
        },
      },
      telemetry: { event: (e) => events.push(e) },
    });
    return { ...env, svc, delivered, events, setEnabled: (v: boolean) => (enabled = v) };
  }

  it('accepts a web send for an opted-in customer, delivers it and records telemetry', async () => {
    const s = await service();
    const c = await s.customers.upsert({ externalId: 'ext-1', email: 'a@example.com' });
    expect(await s.svc.setOptIn('ext-1', true)).toEqual({ customerExternalId: 'ext-1', optIn: true });
    const r = await s.svc.send({ customerExternalId: 'ext-1', channel: 'web', content: 'Your order shipped', dedupKey: 'order-1' });
    expect(r.accepted).toBe(true);
    if (!r.accepted) return;
    expect(r.messageId).toMatch(/^pm_/);
    expect(s.delivered).toEqual([
      {
        messageId: r.messageId,
        customer: expect.objectContaining({ customerId: c.customerId }),
        request: expect.objectContaining({ content: 'Your order shipped' }),
      },
    ]);
    expect(s.events).toEqual([
      expect.objectContaining({
        type: 'proactive.accepted',
        customerId: c.customerId,
        customerExternalId: 'ext-1',
        channel: 'web',
        data: expect.objectContaining({ dedupKey: 'order-1', messageId: r.messageId }),
      }),
    ]);
  });

  it('reaches every reason string through the real guardrails', async () => {
    const s = await service({ dailyCap: 2 });
    const send = (body: Partial<Parameters<typeof s.svc.send>[0]> = {}) =>
      s.svc.send({ customerExternalId: 'ext-1', channel: 'web', content: 'hello', ...body });
    const blocked = (reason: string) => ({ accepted: false, reason });

    s.setEnabled(false);
    expect(await send()).toEqual(blocked(BLOCK_REASONS.disabled));
    s.setEnabled(true);

    expect(await send()).toEqual(blocked(BLOCK_REASONS.unknownCustomer));

    await s.customers.upsert({ externalId: 'ext-1' });
    expect(await send({ channel: 'whatsapp' })).toEqual(blocked(BLOCK_REASONS.noAddress));

    expect(await send()).toEqual(blocked(BLOCK_REASONS.notOptedIn));
    await s.svc.setOptIn('ext-1', true);

    expect((await send({ dedupKey: 'd1' })).accepted).toBe(true);
    expect(await send({ dedupKey: 'd1' })).toEqual(blocked(BLOCK_REASONS.duplicate));

    expect((await send({ dedupKey: 'd2' })).accepted).toBe(true);
    expect(await send({ dedupKey: 'd3' })).toEqual(blocked(BLOCK_REASONS.cap));

    const other = await s.customers.upsert({ externalId: 'ext-2', phone: '+15550002' });
    await s.svc.setOptIn('ext-2', true);
    expect(await send({ customerExternalId: 'ext-2', channel: 'whatsapp' })).toEqual(blocked(BLOCK_REASONS.window));
    expect((await send({ customerExternalId: 'ext-2', channel: 'whatsapp', template: { name: 'followup', language: 'en' } })).accepted).toBe(true);
    await s.customers.touchInbound(other.customerId, 'whatsapp', s.clock.now() - HOUR);
    expect((await send({ customerExternalId: 'ext-2', channel: 'whatsapp' })).accepted).toBe(true);

    await s.svc.setOptIn('ext-2', false);
    expect(await send({ customerExternalId: 'ext-2', channel: 'whatsapp' })).toEqual(blocked(BLOCK_REASONS.notOptedIn));

    expect(s.delivered).toHaveLength(4);
    const types = s.events.map((e) => e.type);
    expect(types.filter((t) => t === 'proactive.accepted')).toHaveLength(4);
    expect(types.filter((t) => t === 'proactive.blocked')).toHaveLength(8);
    expect(s.events.find((e) => e.data?.reason === BLOCK_REASONS.duplicate)?.data).toEqual(expect.objectContaining({ dedupKey: 'd1', channel: 'web' }));
  });

  it('a delivery that cannot be written is an internal failure: rejects ProactiveUnavailableError, never an invented reason', async () => {
    const s = await service({ deliverError: 'outbox full' });
    await s.customers.upsert({ externalId: 'ext-1' });
    await s.svc.setOptIn('ext-1', true);
    await expect(s.svc.send({ customerExternalId: 'ext-1', channel: 'web', content: 'x' })).rejects.toBeInstanceOf(ProactiveUnavailableError);
    expect(s.events.map((e) => e.type)).toEqual(['proactive.failed']);
    expect(s.events[0].data).toMatchObject({ error: 'Delivery failed: outbox full' });
  });

  it('a delivery that cannot be written aborts the reservation: the key and the cap are not used up', async () => {
    const s = await service({ deliverError: 'no outbound queue' });
    await s.customers.upsert({ externalId: 'ext-9' });
    await s.svc.setOptIn('ext-9', true);
    await expect(s.svc.send({ customerExternalId: 'ext-9', channel: 'web', content: 'x', dedupKey: 'once' })).rejects.toThrow(
      'Delivery failed: no outbound queue',
    );
    const c = (await s.customers.findBy('ext', 'ext-9'))!;
    expect(await s.ledger.sentInWindow(c.customerId)).toBe(0);
    expect(await s.ledger.reserve({ customerId: c.customerId, channel: 'web', dedupKey: 'once', hasTemplate: false })).toMatchObject({ ok: true });
  });

  it('concurrent sends through the service respect the cap exactly', async () => {
    const s = await service({ dailyCap: 3 });
    await s.customers.upsert({ externalId: 'ext-1' });
    await s.svc.setOptIn('ext-1', true);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => s.svc.send({ customerExternalId: 'ext-1', channel: 'web', content: `m${i}`, dedupKey: `k${i}` })),
    );
    expect(results.filter((r) => r.accepted)).toHaveLength(3);
    expect(results.filter((r) => !r.accepted && r.reason === BLOCK_REASONS.cap)).toHaveLength(47);
    expect(s.delivered).toHaveLength(3);
  });

  it('setOptIn for an unknown customer returns undefined and creates nothing', async () => {
    const s = await service();
    expect(await s.svc.setOptIn('nobody', true)).toBeUndefined();
    expect(await s.customers.findBy('ext', 'nobody')).toBeUndefined();
  });

  it('request schemas accept the interface body and reject bad ones', () => {
    expect(ProactiveRequestSchema.safeParse({ customerExternalId: 'e', channel: 'whatsapp', content: 'c', dedupKey: 'k' }).success).toBe(true);
    expect(
      ProactiveRequestSchema.safeParse({ customerExternalId: 'e', channel: 'web', content: 'c', template: { name: 'n', language: 'en', parameters: ['a'] } })
        .success,
    ).toBe(true);
    expect(ProactiveRequestSchema.safeParse({ customerExternalId: 'e', channel: 'sms', content: 'c' }).success).toBe(false);
    expect(ProactiveRequestSchema.safeParse({ customerExternalId: '', channel: 'web', content: 'c' }).success).toBe(false);
    expect(ProactiveRequestSchema.safeParse({ customerExternalId: 'e', channel: 'web', content: 'x'.repeat(4097) }).success).toBe(false);
    expect(ProactiveRequestSchema.safeParse({ customerExternalId: 'e', channel: 'web', content: 'c', dedupKey: '' }).success).toBe(false);
    expect(ProactiveRequestSchema.safeParse({ customerExternalId: 'e', channel: 'web', content: 'c', template: { name: 'n' } }).success).toBe(false);
    expect(OptInRequestSchema.safeParse({ customerExternalId: 'e', optIn: true }).success).toBe(true);
    expect(OptInRequestSchema.safeParse({ customerExternalId: 'e', optIn: 'yes' }).success).toBe(false);
  });
});
