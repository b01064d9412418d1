// The reflection cycle against a real LMDB, the real offline LLM, the real proactive service and ledger, with a
// manual clock (test/unit/daemon.*.test.ts). Call `closeReflectionEnvs` after each test.
import { createWebSessions } from '../../src/web/sessions.ts';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { conversationIdFor } from '../../src/conversations/history.ts';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { createReflectionCycle, type ReflectionDeps } from '../../src/daemon/reflection.ts';
import { createOfflineProvider } from '../../src/llm/offline.ts';
import type { LlmProvider } from '../../src/llm/types.ts';
import { createLogger } from '../../src/logger.ts';
import { createProactiveDelivery } from '../../src/proactive/delivery.ts';
import { createProactiveLedger } from '../../src/proactive/ledger.ts';
import { createProactiveService } from '../../src/proactive/service.ts';
import type { Services } from '../../src/services.ts';
import type { ConversationRecord } from '../../src/store/model.ts';
import { createTelemetryRecorder } from '../../src/telemetry/recorder.ts';
import type { TelemetryEvent, TurnCallRecord } from '../../src/telemetry/types.ts';
import { testConfig } from './parley.ts';
import { openTestStore } from './store.ts';

const MIN = 60_000;
const START = Date.UTC(2026, 0, 1);

const cleanup: (() => Promise<unknown>)[] = [];

/** Closes every environment made since the last call (newest first). */
export async function closeReflectionEnvs() {
  for (const c of cleanup.splice(0).reverse()) await c();
}

export async function reflectionEnv(
  o: {
    dailyCap?: number;
    maxPerCycle?: number;
    idleMinutes?: number;
    llm?: LlmProvider;
    send?: (real: ReflectionDeps['sendFollowup']) => ReflectionDeps['sendFollowup'];
  } = {},
) {
  const store = await openTestStore();
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
  const ledger = createProactiveLedger({ store, clock, dailyCap: config.proactive.daily_cap, dedupWindowHours: config.proactive.dedup_window_hours });
  const proactive = createProactiveService({
    store,
    clock,
    customers,
    ledger,
    telemetry,
    enabled: () => true,
    deliver: createProactiveDelivery({ services, sessions: createWebSessions(clock.now) }),
  });
  const real: ReflectionDeps['sendFollowup'] = (req) => proactive.send(req);
  const runCycle = createReflectionCycle({ services, llm: o.llm ?? createOfflineProvider(), sendFollowup: o.send ? o.send(real) : real });
  const record = (conversationId: string) => store.conversations.get(conversationId);

  /**
   * A web conversation as the host leaves it: history plus the record. `unanswered` → the offline verdict is
   * unresolved. `unindexed` writes the record under the engine's review index (LMDB's raw table): data the index
   * does not know.
   */
  async function conversation(
    externalId: string,
    o2: { agoMs?: number; unanswered?: boolean; optIn?: boolean; noExternalId?: boolean; unindexed?: boolean } = {},
  ) {
    const c = await customers.upsert({ externalId, email: `${externalId}@example.com` });
    if (o2.optIn !== false) await customers.setOptIn(externalId, true);
    const id = conversationIdFor(c.customerId, 'web');
    const at = clock.now() - (o2.agoMs ?? 60 * MIN);
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
    await store.transaction(async (tx) => {
      await tx.conversations.lock(id);
      await tx.history.append({ id: `${id}-u`, conversationId: id, role: 'user', text: 'cancel order 1', at });
      if (!o2.unanswered) {
        await tx.history.append({ id: `${id}-a`, conversationId: id, role: 'assistant', text: 'Order 1 is cancelled.', at });
        await tx.history.append({ id: `${id}-t`, conversationId: id, role: 'tool', text: '', at, data: { name: 'cancelOrder', ok: true } });
        await tx.history.append({ id: `${id}-a2`, conversationId: id, role: 'assistant', text: 'Done.', at });
      }
      if (!o2.unindexed) await tx.conversations.put(record); // the host's line
    });
    if (o2.unindexed) await store.kv.direct.put('conversations', id, record);
    return { id, customerId: c.customerId };
  }

  /** What the conversation host writes when the customer sends a message. */
  const customerWrites = (id: string) =>
    store.transaction(async (tx) => {
      const r = (await tx.conversations.lock(id))!;
      await tx.conversations.put(Object.assign({}, r, { lastMessageAt: clock.now(), lastCustomerMessageAt: clock.now(), reviewedAt: undefined }));
    });

  const ofType = (type: string, conversationId?: string) => events.filter((e) => e.type === type && (!conversationId || e.conversationId === conversationId));
  return { store, clock, customers, ledger, proactive, runCycle, record, conversation, customerWrites, ofType, events, turnCalls };
}
