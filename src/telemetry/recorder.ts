// Collects telemetry records and writes them to LMDB every 100 ms as one write-only
// batch, so recording costs a turn an array push. Records are encoded to bytes in the
// event-loop turn that made them (they never live long enough for the GC to move them),
// and a flush writes them as one segment per table plus one key of conversation
// references (segment.ts, SEGMENTS.md); those are folded into the conversation index
// every few seconds (compaction.ts). `turn.started` is not persisted (see below).
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import type { Store, StoreWrite } from '../store/types.ts';
import { codecs } from './codec.ts';
import { compactConversationIndex, type PendingRefs } from './compaction.ts';
import { pendingRefsKey, timeOrderedId } from './keys.ts';
import { createSegmentBuilder } from './segment.ts';
import type { TelemetryTable } from './segment-reader.ts';
import type { NewEvent, NewTurnCall, Telemetry, TelemetryEvent, TurnCallRecord } from './types.ts';

export { timeOrderedId } from './keys.ts';

export interface RecorderOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  enabled?: boolean;
  flushIntervalMs?: number;
  maxBatch?: number;
  compactEveryMs?: number;
}

const TABLES = ['telemetry', 'turnCalls'] as const;

export function createTelemetryRecorder(o: RecorderOptions): Telemetry {
  let persisting = o.enabled ?? true;
  const listeners = new Set<{ event?(e: TelemetryEvent): void; turnCall?(r: TurnCallRecord): void }>();
  // Ids are `at-seq`: seeded from the clock so a restarted process does not reuse the
  // previous one's (at, seq) pairs when producers pass an `at` in the past.
  let seq = Math.floor(o.clock.now() * 1000) % 1e8;
  const codec = codecs();
  const builders = { telemetry: createSegmentBuilder(), turnCalls: createSegmentBuilder() };
  const unencodedEvents: TelemetryEvent[] = [];
  const unencodedCalls: TurnCallRecord[] = [];
  let encodeQueued = false;
  let scheduled: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let closed = false;
  let droppedWhileUnavailable = 0;

  // The arrays are emptied in place, not replaced: a fresh array per event-loop turn was ~1 KB of garbage per turn.
  const encodeInto = <T extends { id: string; conversationId?: string }>(table: TelemetryTable, what: string, records: T[], encode: (r: T) => Uint8Array) => {
    for (const r of records) {
      try {
        builders[table].add(r.id, r.conversationId, encode(r));
      } catch (err) {
        o.logger.warn({ err, type: (r as { type?: string }).type }, `telemetry ${what} not encodable, dropped`);
      }
    }
    records.length = 0;
  };
  const encodePending = () => {
    encodeQueued = false;
    encodeInto('telemetry', 'event', unencodedEvents, codec.telemetry.encode);
    encodeInto('turnCalls', 'turn call', unencodedCalls, codec.turnCalls.encode);
  };

  const write = async () => {
    scheduled = undefined;
    encodePending();
    if (builders.telemetry.count + builders.turnCalls.count === 0) return;
    const writes: StoreWrite[] = [];
    let records = 0;
    const flushId = timeOrderedId(o.clock.now(), (seq = (seq + 1) % 1e8));
    for (const table of TABLES) {
      records += builders[table].count;
      const pending: PendingRefs = [];
      for (const segment of builders[table].cut()) {
        writes.push({ table, key: segment.key, value: segment.value });
        for (const [conversationId, offsets] of segment.refs) pending.push([conversationId, segment.key, offsets]);
      }
      if (pending.length) writes.push({ table, key: pendingRefsKey(flushId), value: pending });
    }
    if (writes.length === 0) return;
    try {
      await o.store.writeBatch(writes);
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

  const pendingCount = () => unencodedEvents.length + unencodedCalls.length + builders.telemetry.count + builders.turnCalls.count;

  const schedule = () => {
    if (!encodeQueued) {
      encodeQueued = true;
      setImmediate(encodePending);
    }
    if (pendingCount() >= (o.maxBatch ?? 2000)) {
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

  // Read back from the store, not kept in memory: references kept for seconds would be promoted to
  // the old generation and paid for by every full GC; read once, they die young.
  const compact = async () => {
    for (const table of TABLES) await compactConversationIndex(o.store, table);
  };
  const compactTimer = setInterval(() => {
    compact().catch((err) => {
      if (!isStoreUnavailable(err)) o.logger.warn({ err }, 'telemetry index compaction failed');
    });
  }, o.compactEveryMs ?? 5000);
  compactTimer.unref?.();

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
      unencodedEvents.push(rec);
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
      unencodedCalls.push(rec);
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
      clearInterval(compactTimer);
      await this.flush();
      closed = true;
      await compact().catch((err) => o.logger.warn({ err }, 'telemetry index compaction failed'));
    },
  };
}
