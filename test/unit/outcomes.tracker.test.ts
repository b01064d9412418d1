// The outcome tracker against a real LMDB with a manual clock: outputs recorded in a write's transaction are folded
// in; the sweep decides an episode when its time comes (not before), after a restart of the tracker too (the deadline
// is stored); a fact the record never got (a history written before the fold joined the conversation's write) is read
// from the history before deciding; a rating given twice with the same id counts once.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createLogger } from '../../src/logger.ts';
import { createOutcomeTracker, type OutcomeTracker } from '../../src/outcomes/tracker.ts';
import type { Pending } from '../../src/conversations/host.ts';
import type { ConversationMeta } from '../../src/store/model.ts';
import type { Services } from '../../src/services.ts';
import type { Store } from '../../src/store/repos.ts';
import { createTelemetryRecorder } from '../../src/telemetry/recorder.ts';
import type { TelemetryEvent } from '../../src/telemetry/types.ts';
import { testConfig } from '../support/parley.ts';
import { openTestStore } from '../support/store.ts';

const H = 3_600_000;
const START = Date.UTC(2026, 0, 1);
const meta = { conversationId: 'conv_web_c1', customerId: 'c1', channel: 'web' as const };
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function env(store?: Store) {
  const s = store ?? (await openTestStore());
  const clock = createManualClock(START);
  const logger = createLogger('silent');
  const telemetry = createTelemetryRecorder({ store: s, clock, logger });
  const events: TelemetryEvent[] = [];
  telemetry.subscribe({ event: (e) => void events.push(e) });
  const config = ConfigSchema.parse(testConfig({ outcomes: { assume_after_hours: 24 } }));
  const services = { config, clock, store: s, logger, telemetry, secret: 'x', paths: {}, version: 't', testMode: true } as unknown as Services;
  const tracker = createOutcomeTracker({ services });
  cleanup.push(() => telemetry.close());
  if (!store) cleanup.push(() => s.close());
  cleanup.push(() => tracker.stop());
  return { store: s, clock, tracker, events };
}

/** A conversation write's recorder step: the tracker's writes in a transaction, what follows them once it committed. */
async function record(e: { store: Store; tracker: OutcomeTracker }, m: ConversationMeta, written: Pending[]) {
  if (!e.tracker.recorder.wants(m, written)) return;
  const after = await e.store.transaction((tx) => e.tracker.recorder.record(tx, m, written));
  after();
}

const outcomes = (events: TelemetryEvent[]) => events.filter((e) => e.type === 'conversation.outcome').map((e) => e.data.outcome);

describe('outcome tracker', () => {
  it('folds the outputs recorded in a write, decides when the time comes (a restart keeps the deadline), and reads missed facts from the history', async () => {
    const first = await env();
    await first.tracker.start();
    await record(first, meta, [{ o: { type: 'customer', messageId: 'm1', text: 'where is order 1?' }, at: START }]);
    await record(first, meta, [{ o: { type: 'reply', id: 'r1', turnId: 't1', text: 'Order 1 is shipped.', replyTo: 'm1' }, at: START + 1000 }]);
    expect(await first.store.outcomes.get(meta.conversationId)).toMatchObject({ status: 'open', decideAt: START + 1000 + 24 * H });
    // Not yet due.
    first.clock.advance(24 * H - 10_000);
    expect(await first.tracker.sweep()).toBe(0);
    await first.tracker.stop();

    // A new tracker on the same store (a restart): the stored deadline is found and armed on the clock.
    const second = await env(first.store);
    await second.tracker.start();
    second.clock.advance(25 * H);
    await until(async () => outcomes(second.events).length > 0);
    expect(outcomes(second.events)).toEqual(['resolved_assumed']);
    expect((await second.store.outcomes.get(meta.conversationId))!.status).toBe('resolved_assumed');
    expect((await second.store.outcomes.get(meta.conversationId))!.endedAt).toBe(START + 1000);

    // Another conversation: the customer's later message is in the history, but its fold was lost (a crash).
    const other = { conversationId: 'conv_web_c2', customerId: 'c2', channel: 'web' as const };
    const t0 = second.clock.now();
    await record(second, other, [
      { o: { type: 'customer', messageId: 'n1', text: 'refund order 2' }, at: t0 },
      { o: { type: 'reply', id: 'q1', turnId: 'u1', text: 'Done, refunded.', replyTo: 'n1' }, at: t0 + 1000 },
    ]);
    await second.store.transaction(async (tx) => {
      await tx.history.append({ id: 'n1', conversationId: other.conversationId, role: 'user', text: 'refund order 2', at: t0 });
      await tx.history.append({ id: 'q1', conversationId: other.conversationId, role: 'assistant', text: 'Done, refunded.', at: t0 + 1000 });
      await tx.history.append({ id: 'n2', conversationId: other.conversationId, role: 'user', text: 'hello?', at: t0 + 2000 });
    });
    second.clock.advance(25 * H);
    await until(async () => outcomes(second.events).length > 1);
    // The unanswered "hello?" decides it: unresolved, not assumed.
    expect(await second.store.outcomes.get(other.conversationId)).toMatchObject({ status: 'unresolved', lastAt: t0 + 2000 });
  });

  it('a rating with the same id is stored and counted once; no record, no rating', async () => {
    const e = await env();
    await e.tracker.start();
    expect(await e.tracker.rate(meta.conversationId, { score: 4 })).toBe(false);
    await record(e, meta, [{ o: { type: 'customer', messageId: 'm1', text: 'hi' }, at: START }]);
    expect(await e.tracker.rate(meta.conversationId, { score: 4, id: 'wamid.1' })).toBe(true);
    expect(await e.tracker.rate(meta.conversationId, { score: 4, id: 'wamid.1' })).toBe(true);
    expect(e.events.filter((x) => x.type === 'conversation.rating')).toHaveLength(1);
    expect((await e.store.outcomes.get(meta.conversationId))!.csat).toMatchObject({ score: 4, id: 'wamid.1' });
  });
});

async function until(ok: () => Promise<boolean>, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
