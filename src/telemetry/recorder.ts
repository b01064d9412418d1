// Collects telemetry records and writes them to LMDB every 100 ms as one
// write-only batch, so recording costs a turn an array push. Keys are time-ordered ids;
// each conversation in a batch gets one index key listing its records' ids
// (see keys.ts), so one conversation's timeline is read without a table scan.
// `turn.started` is not persisted (see below).
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Store, StoreWrite } from '../store/types.ts';
import { conversationIndexKey, timeOrderedId } from './keys.ts';
import type { NewEvent, NewTurnCall, Telemetry, TelemetryEvent, TurnCallRecord } from './types.ts';

export { timeOrderedId } from './keys.ts';

export interface RecorderOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  enabled?: boolean;
  flushIntervalMs?: number;
  maxBatch?: number;
}

export function createTelemetryRecorder(o: RecorderOptions): Telemetry {
  const enabled = o.enabled ?? true;
  const listeners = new Set<{ event?(e: TelemetryEvent): void; turnCall?(r: TurnCallRecord): void }>();
  // Ids are `at-seq`: seeded from the clock so a restarted process does not reuse the
  // previous one's (at, seq) pairs when producers pass an `at` in the past.
  let seq = Math.floor(o.clock.now() * 1000) % 1e8;
  let pendingEvents: TelemetryEvent[] = [];
  let pendingCalls: TurnCallRecord[] = [];
  let scheduled: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let closed = false;

  /** One index entry per conversation in this batch: its smallest id → all its ids, sorted. */
  const indexWrites = (table: 'telemetry' | 'turnCalls', recs: { id: string; conversationId?: string }[], out: StoreWrite[]) => {
    const byConversation = new Map<string, string[]>();
    for (const r of recs) {
      if (r.conversationId === undefined) continue;
      const ids = byConversation.get(r.conversationId);
      if (ids) ids.push(r.id);
      else byConversation.set(r.conversationId, [r.id]);
    }
    for (const [conversationId, ids] of byConversation) {
      ids.sort();
      out.push({ table, key: conversationIndexKey(conversationId, ids[0]), value: ids });
    }
  };

  const write = async () => {
    scheduled = undefined;
    const ev = pendingEvents;
    const tc = pendingCalls;
    pendingEvents = [];
    pendingCalls = [];
    if (ev.length === 0 && tc.length === 0) return;
    try {
      const writes: StoreWrite[] = [];
      for (const e of ev) writes.push({ table: 'telemetry', key: e.id, value: e });
      for (const c of tc) writes.push({ table: 'turnCalls', key: c.id, value: c });
      indexWrites('telemetry', ev, writes);
      indexWrites('turnCalls', tc, writes);
      await o.store.writeBatch(writes);
    } catch (err) {
      o.logger.error({ err, dropped: ev.length + tc.length }, 'telemetry write failed');
    }
  };

  const schedule = () => {
    if (pendingEvents.length + pendingCalls.length >= (o.maxBatch ?? 2000)) {
      if (scheduled) clearTimeout(scheduled);
      scheduled = undefined;
      inFlight = inFlight.then(write);
      return;
    }
    if (!scheduled) {
      scheduled = setTimeout(() => {
        inFlight = inFlight.then(write);
      }, o.flushIntervalMs ?? 100);
      scheduled.unref?.();
    }
  };

  const eachListener = (fn: (l: { event?(e: TelemetryEvent): void; turnCall?(r: TurnCallRecord): void }) => void) => {
    for (const l of listeners) {
      try {
        fn(l);
      } catch (err) {
        o.logger.warn({ err }, 'telemetry listener failed');
      }
    }
  };

  // `turn.started` is live only (listeners, metrics): its time is carried by the turn's
  // `turn.ended` record as `data.startedAt`, one persisted record per turn fewer.
  const turnStarts = new Map<string, number>();
  const MAX_OPEN_TURNS = 10_000;

  const timeOf = (at: number | undefined) => (at !== undefined && Number.isFinite(at) && at >= 0 ? at : o.clock.now());

  return {
    event(e: NewEvent) {
      if (closed) return;
      const at = timeOf(e.at);
      // One object shape for every event (absent fields stay undefined and are not sent in JSON),
      // so the encoder reuses one record structure.
      const rec: TelemetryEvent = {
        id: timeOrderedId(at, (seq = (seq + 1) % 1e8)),
        at,
        type: e.type,
        conversationId: e.conversationId,
        customerId: e.customerId,
        customerExternalId: e.customerExternalId,
        channel: e.channel,
        data: e.data ?? {},
      };
      if (rec.type === 'turn.started' && typeof rec.data.turnId === 'string') {
        if (turnStarts.size >= MAX_OPEN_TURNS) turnStarts.clear();
        turnStarts.set(rec.data.turnId, at);
        if (listeners.size) eachListener((l) => l.event?.(rec));
        return;
      }
      if (rec.type === 'turn.ended' && typeof rec.data.turnId === 'string') {
        const startedAt = turnStarts.get(rec.data.turnId);
        if (startedAt !== undefined) {
          turnStarts.delete(rec.data.turnId);
          rec.data = Object.assign({}, rec.data, { startedAt });
        }
      }
      if (listeners.size) eachListener((l) => l.event?.(rec));
      if (!enabled) return;
      pendingEvents.push(rec);
      schedule();
    },
    turnCall(r: NewTurnCall) {
      if (closed) return;
      const at = timeOf(r.at);
      const rec: TurnCallRecord = {
        id: timeOrderedId(at, (seq = (seq + 1) % 1e8)),
        turnId: r.turnId,
        conversationId: r.conversationId,
        customerId: r.customerId,
        sequence: r.sequence,
        at,
        provider: r.provider,
        model: r.model,
        purpose: r.purpose,
        durationMs: r.durationMs,
        promptTokens: r.promptTokens,
        completionTokens: r.completionTokens,
        toolCalls: r.toolCalls,
        ok: r.ok,
        error: r.error,
      };
      if (listeners.size) eachListener((l) => l.turnCall?.(rec));
      if (!enabled) return;
      pendingCalls.push(rec);
      schedule();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async flush() {
      if (scheduled) clearTimeout(scheduled);
      scheduled = undefined;
      inFlight = inFlight.then(write);
      await inFlight;
    },
    async close() {
      await this.flush();
      closed = true;
    },
  };
}
