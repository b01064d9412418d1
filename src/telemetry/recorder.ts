// Collects telemetry records: listeners (metrics, live views) see each one at once; the store's telemetry writer
// takes them for persistence (LMDB encodes them in the event-loop turn that made them; see the engine), and a
// flush every 100 ms (sooner past `maxBatch`) writes them as one batch off the hot path. `turn.started` is not
// persisted (see below). A failed write is logged and never fails a turn.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import type { Store } from '../store/repos.ts';
import { timeOrderedId } from './ids.ts';
import type { NewEvent, NewTurnCall, Telemetry, TelemetryEvent, TurnCallRecord } from './types.ts';

export { timeOrderedId } from './ids.ts';

export interface RecorderOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  enabled?: boolean;
  flushIntervalMs?: number;
  maxBatch?: number;
}

export function createTelemetryRecorder(o: RecorderOptions): Telemetry {
  let persisting = o.enabled ?? true;
  const listeners = new Set<{ event?(e: TelemetryEvent): void; turnCall?(r: TurnCallRecord): void }>();
  // Ids are `at-seq`: seeded from the clock so a restarted process does not reuse the
  // previous one's (at, seq) pairs when producers pass an `at` in the past.
  let seq = Math.floor(o.clock.now() * 1000) % 1e8;
  const writer = o.store.telemetry.writer();
  let scheduled: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let closed = false;
  let droppedWhileUnavailable = 0;

  const write = async () => {
    scheduled = undefined;
    const records = writer.pending();
    if (records === 0) return;
    try {
      await writer.flush();
      if (droppedWhileUnavailable > 0)
        o.logger.warn({ dropped: droppedWhileUnavailable }, 'telemetry is written again; records made while the store could not write were dropped');
      droppedWhileUnavailable = 0;
    } catch (err) {
      // While the store cannot write at all (a full disk), one line for the whole outage, not one every flush.
      if (!isStoreUnavailable(err)) o.logger.error({ err, dropped: records }, 'telemetry write failed');
      else if (droppedWhileUnavailable === 0)
        o.logger.error({ err }, 'telemetry cannot be written while the store cannot write; records are dropped until it can');
      if (isStoreUnavailable(err)) droppedWhileUnavailable += records;
    }
  };

  const schedule = () => {
    if (writer.pending() >= (o.maxBatch ?? 2000)) {
      if (scheduled) clearTimeout(scheduled);
      scheduled = undefined;
      queueWrite();
      return;
    }
    if (!scheduled) {
      scheduled = setTimeout(queueWrite, o.flushIntervalMs ?? 100);
      scheduled.unref?.();
    }
  };

  // One write waiting at most: it takes everything recorded before it starts.
  let writeQueued = false;
  const queueWrite = () => {
    if (writeQueued) return;
    writeQueued = true;
    inFlight = inFlight.then(() => {
      writeQueued = false;
      return write();
    });
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
      if (!persisting) return;
      writer.addEvent(rec);
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
      if (!persisting) return;
      writer.addTurnCall(rec);
      schedule();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async flush() {
      if (scheduled) clearTimeout(scheduled);
      scheduled = undefined;
      queueWrite();
      await inFlight;
    },
    setPersisting(on: boolean) {
      persisting = on;
    },
    async close() {
      await this.flush();
      closed = true;
    },
  };
}
