// Collects telemetry records: listeners (metrics, live views) see each one at once; the store's telemetry writer
// takes them for persistence (LMDB encodes them in the event-loop turn that made them; see the engine), and a
// flush every 100 ms (sooner past `maxBatch`) writes them as one batch off the hot path. `turn.started` is not
// persisted (see below). A failed write is logged and never fails a turn.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import type { Store } from '../store/repos.ts';
import { timeOrderedId } from '../store/telemetry-records.ts';
import { llmCost, type PriceTable } from './pricing.ts';
import type { NewEvent, NewTurnCall, Telemetry, TelemetryEvent, TurnCallRecord } from './types.ts';

export { timeOrderedId } from '../store/telemetry-records.ts';

/** While the store cannot write: how soon what it kept is tried again when nothing new is recorded. */
const STORE_RETRY_MS = 1000;

export interface RecorderOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  enabled?: boolean;
  flushIntervalMs?: number;
  maxBatch?: number;
  /** `llm.prices`: each LLM call's cost is computed from it when the call is recorded. */
  prices?: PriceTable;
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
  /** Records handed to the writer and not yet known to be written or dropped. */
  let held = 0;
  let droppedWhileUnavailable = 0;
  let waitingForStore = false;

  /** What the writer let go of since the last look: an engine may keep a batch it could not write (PostgreSQL) or drop it (LMDB). */
  const settle = (written: number) => {
    const pending = writer.pending();
    const lost = Math.max(0, held - written - pending);
    held = pending;
    return lost;
  };

  const write = async () => {
    scheduled = undefined;
    const records = writer.pending();
    if (records === 0) return;
    try {
      const written = await writer.flush();
      const lost = settle(written);
      if (waitingForStore) {
        droppedWhileUnavailable += lost;
        if (droppedWhileUnavailable > 0)
          o.logger.warn({ dropped: droppedWhileUnavailable }, 'telemetry is written again; records made while the store could not write were dropped');
        else o.logger.info('telemetry is written again; nothing was lost');
      }
      waitingForStore = false;
      droppedWhileUnavailable = 0;
    } catch (err) {
      const lost = settle(0);
      if (!isStoreUnavailable(err)) {
        o.logger.error({ err, dropped: lost }, 'telemetry write failed');
        return;
      }
      // While the store cannot write at all (a full disk, the database away): one line for the whole outage, not one
      // every flush, and no stack (the store's health names the cause).
      if (!waitingForStore) o.logger.warn({ cause: err.code }, 'telemetry waits for the store; what the store cannot keep meanwhile is dropped');
      waitingForStore = true;
      droppedWhileUnavailable += lost;
      // What the engine kept is tried again, even if nothing new is recorded.
      if (writer.pending() > 0 && !scheduled) {
        scheduled = setTimeout(queueWrite, STORE_RETRY_MS);
        scheduled.unref?.();
      }
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
      held++;
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
        cachedPromptTokens: r.cachedPromptTokens,
        cost: o.prices ? llmCost(o.prices, r) : undefined,
        toolCalls: r.toolCalls,
        ok: r.ok,
        error: r.error,
      };
      if (listeners.size) eachListener((l) => l.turnCall?.(rec));
      if (!persisting) return;
      writer.addTurnCall(rec);
      held++;
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
