// The reflection cycle against a real LMDB, the real offline LLM, the real
// proactive service and ledger, with a manual clock: selection (idle_minutes,
// max_per_cycle), the guardrails on follow-ups, and crash safety.
import { afterEach, describe, expect, it } from 'vitest';
import { BLOCK_REASONS } from '../../machines/proactive.ts';
import { createWebSessions } from '../../src/channels/web-sessions.ts';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import type { ConversationRecord } from '../../src/conversations/host.ts';
import { conversationIdFor, createHistoryRepo } from '../../src/conversations/history.ts';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { createReflectionCycle, MAX_FOLLOWUP_ATTEMPTS, MAX_REVIEW_ATTEMPTS, type ReflectionDeps, type ReviewedRecord } from '../../src/daemon/reflection.ts';
import { noteLastMessageInTx } from '../../src/daemon/review-index.ts';
import { createOfflineProvider } from '../../src/llm/offline.ts';
import { createResilientLlm } from '../../src/llm/resilient.ts';
import { LlmError } from '../../src/llm/types.ts';
import type { LlmProvider } from '../../src/llm/types.ts';
import { createLogger } from '../../src/logger.ts';
import { createProactiveDelivery } from '../../src/proactive/delivery.ts';
import { createProactiveLedger } from '../../src/proactive/ledger.ts';
import { createProactiveService, ProactiveUnavailableError } from '../../src/proactive/service.ts';
import type { Services } from '../../src/services.ts';
import { openStore } from '../../src/store/lmdb.ts';
import { LATEST_SCHEMA_VERSION, migrations } from '../../src/store/migrations.ts';
import type { Store } from '../../src/store/types.ts';
import { createTelemetryRecorder } from '../../src/telemetry/recorder.ts';
import type { TelemetryEvent, TurnCallRecord } from '../../src/telemetry/types.ts';
import { testConfig } from '../support/parley.ts';
import { tempDir } from '../support/tmp.ts';

const MIN = 60_000;
const START = Date.UTC(2026, 0, 1);

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function env(
  o: {
    dailyCap?: number;
    maxPerCycle?: number;
    idleMinutes?: number;
    llm?: LlmProvider;
    send?: (real: ReflectionDeps['sendFollowup']) => ReflectionDeps['sendFollowup'];
  } = {},
) {
  const store: Store = await openStore({ path: tempDir() });
  const clock: ManualClock = createManualClock(START);
  const logger = createLogger('silent');
  const telemetry = createTelemetryRecorder({ store, clock, logger });
  cleanup.push(
    () => store.close(),
    () => telemetry.close(),
  );
  const events: TelemetryEvent[] = [];
  const turnCalls: TurnCallRecord[] = [];
  telemetry.subscribe({ event: (e) => void events.push(e), turnCall: (r) => void turnCalls.push(r) });
  const config = ConfigSchema.parse(
    testConfig({
      proactive: { enabled: true, daily_cap: o.dailyCap ?? 3 },
      daemon: { enabled: true, proactive_followup: true, idle_minutes: o.idleMinutes ?? 30, max_per_cycle: o.maxPerCycle ?? 20 },
    }),
  );
  const services = {
    config,
    clock,
    store,
    logger,
    telemetry,
    secret: 'x',
    paths: { config: '', storage: '', public: '' },
    version: 't',
    testMode: true,
  } as Services;
  const customers = createCustomerRepo(store, clock);
  const history = createHistoryRepo(store);
  const ledger = createProactiveLedger({ store, clock, dailyCap: config.proactive.daily_cap, dedupWindowHours: config.proactive.dedup_window_hours });
  const proactive = createProactiveService({
    store,
    clock,
    customers,
    ledger,
    telemetry,
    enabled: () => true,
    deliver: createProactiveDelivery({ services, history, sessions: createWebSessions(clock.now) }),
  });
  const real: ReflectionDeps['sendFollowup'] = (req) => proactive.send(req);
  const runCycle = createReflectionCycle({ services, llm: o.llm ?? createOfflineProvider(), history, sendFollowup: o.send ? o.send(real) : real });
  const records = store.table<ReviewedRecord>('conversations');

  /** A web conversation as the host leaves it: history plus the record. `unanswered` → the offline verdict is unresolved. */
  async function conversation(
    externalId: string,
    o2: { agoMs?: number; unanswered?: boolean; optIn?: boolean; noExternalId?: boolean; unindexed?: boolean } = {},
  ) {
    const c = await customers.upsert({ externalId, email: `${externalId}@example.com` });
    if (o2.optIn !== false) await customers.setOptIn(externalId, true);
    const id = conversationIdFor(c.customerId, 'web');
    const at = clock.now() - (o2.agoMs ?? 60 * MIN);
    await store.transaction(() => {
      history.appendInTx({ id: `${id}-u`, conversationId: id, role: 'user', text: 'cancel order 1', at });
      if (!o2.unanswered) history.appendInTx({ id: `${id}-a`, conversationId: id, role: 'assistant', text: 'Order 1 is cancelled.', at });
      if (!o2.unanswered) history.appendInTx({ id: `${id}-t`, conversationId: id, role: 'tool', text: '', at, data: { name: 'cancelOrder', ok: true } });
      if (!o2.unanswered) history.appendInTx({ id: `${id}-a2`, conversationId: id, role: 'assistant', text: 'Done.', at });
      const record: ConversationRecord = {
        conversationId: id,
        customerId: c.customerId,
        externalId: o2.noExternalId ? undefined : externalId,
        channel: 'web',
        snapshot: { big: 'x'.repeat(100) },
        state: 'idle',
        busy: false,
        updatedAt: at,
        lastMessageAt: at,
        lastCustomerMessageAt: at,
      };
      records.putInTx(id, record);
      if (!o2.unindexed) noteLastMessageInTx(store, id, undefined, at); // the host's line
    });
    return { id, customerId: c.customerId };
  }

  /** What the conversation host writes when the customer sends a message. */
  const customerWrites = (id: string) =>
    store.transaction(() => {
      const r = records.get(id)!;
      records.putInTx(id, { ...r, lastMessageAt: clock.now(), lastCustomerMessageAt: clock.now(), reviewedAt: undefined });
      noteLastMessageInTx(store, id, r.lastMessageAt, clock.now());
    });

  const ofType = (type: string, conversationId?: string) => events.filter((e) => e.type === type && (!conversationId || e.conversationId === conversationId));
  return { store, clock, customers, ledger, proactive, runCycle, records, conversation, customerWrites, ofType, events, turnCalls };
}

{
  const envFor = env;

  describe('reflection cycle (review index kept by the host)', () => {
    describe('which conversations are reviewed', () => {
      it('idle_minutes: a conversation younger than that is not reviewed', async () => {
        const e = await envFor({ idleMinutes: 30 });
        const old = await e.conversation('old', { agoMs: 31 * MIN });
        const young = await e.conversation('young', { agoMs: 29 * MIN });
        expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
        expect(e.records.get(old.id)?.reflection?.verdict).toBe('resolved');
        expect(e.records.get(young.id)?.reflection).toBeUndefined();
        e.clock.advance(MIN);
        expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
        expect(e.records.get(young.id)?.reflection?.verdict).toBe('resolved');
      });

      it('max_per_cycle: N+1 idle conversations → N reviews in one cycle, the last one next cycle', async () => {
        const e = await envFor({ maxPerCycle: 2 });
        for (const id of ['a', 'b', 'c']) await e.conversation(id);
        expect(await e.runCycle()).toMatchObject({ reviewed: 2 });
        expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
        expect(await e.runCycle()).toMatchObject({ reviewed: 0 });
        expect(e.ofType('daemon.verdict')).toHaveLength(3);
      });
    });

    describe('follow-ups', () => {
      it('an opted-in customer already at the cap: the follow-up is blocked "Daily proactive limit reached" and not retried', async () => {
        const e = await envFor({ dailyCap: 1 });
        const c = await e.conversation('capped', { unanswered: true });
        // An earlier accepted proactive message (on the ledger only, so the transcript stays unresolved).
        expect((await e.ledger.reserve({ customerId: c.customerId, channel: 'web', hasTemplate: false })).ok).toBe(true);
        expect(await e.runCycle()).toEqual({ reviewed: 1, followups: 0 });
        expect(e.ofType('daemon.followup', c.id).map((x) => x.data.reason)).toEqual([BLOCK_REASONS.cap]);
        expect(e.ofType('proactive.blocked').map((x) => x.data)).toEqual([
          expect.objectContaining({ reason: BLOCK_REASONS.cap, dedupKey: `followup:${c.id}` }),
        ]);
        expect(e.records.get(c.id)?.followupPending).toBeUndefined();
        await e.runCycle();
        expect(e.ofType('daemon.followup', c.id)).toHaveLength(1);
      });

      it('a follow-up decided but not yet sent is dropped, unsent, when the customer wrote again meanwhile', async () => {
        let fail = true;
        const e = await envFor({ send: (real) => (req) => (fail ? Promise.reject(new ProactiveUnavailableError('store busy')) : real(req)) });
        const c = await e.conversation('back', { unanswered: true });
        await e.runCycle();
        expect(e.records.get(c.id)?.followupPending).toMatchObject({ attempts: 1 });
        e.clock.advance(MIN);
        await e.customerWrites(c.id);
        fail = false;
        await e.runCycle();
        expect(e.records.get(c.id)?.followupPending).toBeUndefined();
        expect(e.ofType('proactive.accepted')).toHaveLength(0);
        expect(e.ofType('daemon.followup', c.id).at(-1)?.data).toMatchObject({ accepted: false, dropped: 'the customer wrote again' });
      });

      it('a non-guardrail failure keeps the follow-up and retries it; it gives up after the bound (logged in telemetry)', async () => {
        let calls = 0;
        const e = await envFor({ send: () => () => (calls++, Promise.reject(new ProactiveUnavailableError('store busy'))) });
        const c = await e.conversation('flaky', { unanswered: true });
        for (let i = 0; i < MAX_FOLLOWUP_ATTEMPTS + 2; i++) await e.runCycle();
        expect(calls).toBe(MAX_FOLLOWUP_ATTEMPTS);
        expect(e.records.get(c.id)?.followupPending).toBeUndefined();
        expect(e.ofType('daemon.gave_up', c.id).map((x) => x.data)).toEqual([
          expect.objectContaining({ what: 'followup', attempts: MAX_FOLLOWUP_ATTEMPTS, error: 'store busy' }),
        ]);
      });

      it('a record without an externalId drops its follow-up at once instead of being rescanned forever', async () => {
        const e = await envFor();
        const c = await e.conversation('anon', { unanswered: true, noExternalId: true });
        await e.runCycle();
        expect(e.records.get(c.id)?.followupPending).toBeUndefined();
        expect(e.ofType('daemon.followup', c.id).map((x) => x.data.dropped)).toEqual(['no customer externalId']);
      });
    });

    describe('crash safety', () => {
      it('a crash after the follow-up was sent (before it was cleared): the next cycle sends nothing — one verdict, one accepted', async () => {
        let crash = true;
        const e = await envFor({
          send: (real) => async (req) => {
            const r = await real(req);
            if (crash) throw new Error('process died after the send');
            return r;
          },
        });
        const c = await e.conversation('once', { unanswered: true });
        await e.runCycle();
        crash = false;
        expect(e.records.get(c.id)?.followupPending).toBeDefined();
        await e.runCycle();
        await e.runCycle();
        expect(e.ofType('daemon.verdict', c.id)).toHaveLength(1);
        expect(e.ofType('proactive.accepted')).toHaveLength(1);
        expect(e.ofType('proactive.blocked').map((x) => x.data.reason)).toEqual([BLOCK_REASONS.duplicate]);
        expect(e.ledger.sentInWindow(c.customerId)).toBe(1);
        expect(e.records.get(c.id)?.followupPending).toBeUndefined();
      });

      it('a crash after the LLM call (before the verdict was stored): reviewed again, one verdict; a review that keeps failing stops after the bound', async () => {
        const offline = createOfflineProvider();
        let calls = 0;
        let failUntil = 1;
        const llm: LlmProvider = {
          ...offline,
          complete: async (req) => {
            const res = await offline.complete(req);
            if (++calls <= failUntil) throw new Error('process died before the verdict was written');
            return res;
          },
        };
        const e = await envFor({ llm });
        const c = await e.conversation('again', { unanswered: true });
        expect(await e.runCycle()).toMatchObject({ reviewed: 0 });
        expect(e.records.get(c.id)?.reviewAttempt).toMatchObject({ attempts: 1 });
        expect(await e.runCycle()).toMatchObject({ reviewed: 1, followups: 1 });
        await e.runCycle();
        expect(calls).toBe(2);
        expect(e.ofType('daemon.verdict', c.id)).toHaveLength(1);
        expect(e.ofType('proactive.accepted')).toHaveLength(1);

        failUntil = Infinity;
        const d = await e.conversation('never', { unanswered: true });
        calls = 0;
        for (let i = 0; i < MAX_REVIEW_ATTEMPTS + 2; i++) await e.runCycle();
        expect(calls).toBe(MAX_REVIEW_ATTEMPTS);
        expect(e.ofType('daemon.verdict', d.id)).toHaveLength(0);
        expect(e.ofType('daemon.gave_up', d.id).map((x) => x.data.what)).toEqual(['review']);
      });
    });
  });
}

describe('review index', () => {
  it('cycles read only the index (a record without its key is not found), and leave no keys behind', async () => {
    const e = await env();
    const indexed = await e.conversation('indexed', { unanswered: true });
    expect(await e.runCycle()).toEqual({ reviewed: 1, followups: 1 });
    expect(e.records.get(indexed.id)?.reflection?.verdict).toBe('unresolved');
    const keys = () => [...e.store.table('proactive').range({ start: ['followup'], end: ['review', '\uffff'] })].map((r) => (r.key as unknown[])[0]);
    expect(keys()).toEqual([]);
    const unindexed = await e.conversation('unindexed', { unindexed: true });
    expect(await e.runCycle()).toEqual({ reviewed: 0, followups: 0 });
    expect(e.records.get(unindexed.id)?.reflection).toBeUndefined();
  });

  it('the schema-2 migration indexes conversations written before the index existed', async () => {
    const path = tempDir();
    // Data as a build at schema 1 left it: records, no index keys.
    const old = await openStore({ path, migrations: migrations.filter((m) => m.version === 1) });
    const base = { customerId: 'c', channel: 'web' as const, snapshot: {}, state: 'idle', busy: false, updatedAt: 1 };
    await old.transaction(() => {
      const records = old.table<ConversationRecord>('conversations');
      records.putInTx('conv_a', { ...base, conversationId: 'conv_a', lastMessageAt: 100 });
      records.putInTx('conv_b', { ...base, conversationId: 'conv_b', lastMessageAt: 200, reviewedAt: 250 });
      records.putInTx('conv_c', { ...base, conversationId: 'conv_c', lastMessageAt: 300, reviewedAt: 310, followupPending: { content: 'x', decidedAt: 310 } });
    });
    await old.close();
    const store = await openStore({ path });
    cleanup.push(() => store.close());
    expect(store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    const keys = [...store.table('proactive').range({ start: ['followup'], end: ['review', '\uffff'] })].map((r) => r.key);
    expect(keys).toEqual([
      ['followup', 'conv_c'],
      ['review', 100, 'conv_a'],
    ]);
  });

  it('a stale key (the conversation moved on, or is gone) is dropped without a review', async () => {
    const e = await env();
    const c = await e.conversation('moved');
    await e.runCycle();
    await e.store.transaction(() => {
      noteLastMessageInTx(e.store, c.id, undefined, 1); // a leftover key for an old lastMessageAt
      noteLastMessageInTx(e.store, 'conv_gone', undefined, 2);
    });
    expect(await e.runCycle()).toEqual({ reviewed: 0, followups: 0 });
    expect([...e.store.table('proactive').range({ start: ['review'], end: ['review', '\uffff'] })]).toEqual([]);
    expect(e.ofType('daemon.verdict', c.id)).toHaveLength(1);
  });
});

describe('reflection LLM calls in telemetry', () => {
  it('a failed attempt and the fallback that answered are two turn-calls of the review', async () => {
    const down: LlmProvider = {
      name: 'primary',
      model: 'down-1',
      complete: async () => {
        throw new LlmError('http_503', 'HTTP 503 from the provider', 'primary');
      },
    };
    const e = await env({ llm: createResilientLlm({ primary: down, fallback: createOfflineProvider(), retries: 1 }) });
    const c = await e.conversation('flaky', { unanswered: true });
    expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
    const calls = e.turnCalls.filter((t) => t.conversationId === c.id && t.purpose === 'reflection');
    expect(calls.map((t) => [t.provider, t.ok])).toEqual([
      ['primary', false],
      ['primary', false],
      ['offline', true],
    ]);
    expect(new Set(calls.map((t) => t.turnId)).size).toBe(1);
  });
});
