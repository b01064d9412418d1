// Batches telemetry records and writes them to LMDB in one transaction per
// batch, so recording costs a turn an array push. Keys are time-ordered ids.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Store } from '../store/types.ts';
import type { NewEvent, NewTurnCall, Telemetry, TelemetryEvent, TurnCallRecord } from './types.ts';

export interface RecorderOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  enabled?: boolean;
  flushIntervalMs?: number;
  maxBatch?: number;
}

/** Sortable id: 13-digit ms timestamp, then a per-process sequence. */
export function timeOrderedId(at: number, seq: number): string {
  // 13 digits of ms cover years 2001–2286 without padding; pad only the sequence.
  const ms = Math.max(0, Math.floor(at));
  return `${ms >= 1e12 ? ms : String(ms).padStart(13, '0')}-${String(seq % 1e8).padStart(8, '0')}`;
}

export function createTelemetryRecorder(o: RecorderOptions): Telemetry {
  const enabled = o.enabled ?? true;
  const events = o.store.table<TelemetryEvent>('telemetry');
  const calls = o.store.table<TurnCallRecord>('turnCalls');
  const listeners = new Set<{ event?(e: TelemetryEvent): void; turnCall?(r: TurnCallRecord): void }>();
  let seq = 0;
  let pendingEvents: TelemetryEvent[] = [];
  let pendingCalls: TurnCallRecord[] = [];
  let scheduled: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let closed = false;

  const write = async () => {
    scheduled = undefined;
    const ev = pendingEvents;
    const tc = pendingCalls;
    pendingEvents = [];
    pendingCalls = [];
    if (ev.length === 0 && tc.length === 0) return;
    try {
      await o.store.transaction(() => {
        for (const e of ev) events.putInTx(e.id, e);
        for (const c of tc) calls.putInTx(c.id, c);
      });
    } catch (err) {
      o.logger.error({ err, dropped: ev.length + tc.length }, 'telemetry write failed');
    }
  };

  const schedule = () => {
    if (pendingEvents.length + pendingCalls.length >= (o.maxBatch ?? 2000)) {
      if (scheduled) clearTimeout(scheduled);
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

  const notify = <K extends 'event' | 'turnCall'>(kind: K, rec: K extends 'event' ? TelemetryEvent : TurnCallRecord) => {
    for (const l of listeners) {
      try {
        (l[kind] as ((r: typeof rec) => void) | undefined)?.(rec);
      } catch (err) {
        o.logger.warn({ err }, 'telemetry listener failed');
      }
    }
  };

  return {
    event(e: NewEvent) {
      if (closed) return;
      const at = e.at ?? o.clock.now();
      const rec: TelemetryEvent = { id: timeOrderedId(at, ++seq), at, type: e.type, data: e.data ?? {} };
      if (e.conversationId !== undefined) rec.conversationId = e.conversationId;
      if (e.customerId !== undefined) rec.customerId = e.customerId;
      if (e.customerExternalId !== undefined) rec.customerExternalId = e.customerExternalId;
      if (e.channel !== undefined) rec.channel = e.channel;
      notify('event', rec);
      if (!enabled) return;
      pendingEvents.push(rec);
      schedule();
    },
    turnCall(r: NewTurnCall) {
      if (closed) return;
      const at = r.at ?? o.clock.now();
      const rec: TurnCallRecord = { ...r, id: timeOrderedId(at, ++seq), at };
      if (rec.error === undefined) delete rec.error;
      notify('turnCall', rec);
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
      inFlight = inFlight.then(write);
      await inFlight;
    },
    async close() {
      await this.flush();
      closed = true;
    },
  };
}
