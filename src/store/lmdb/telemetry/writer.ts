// Telemetry's write path on LMDB: records are encoded as msgpack tuples in the event-loop turn that made them
// (they never live long enough for the GC to move them), and a flush writes one segment per table plus one key of
// conversation references as one write-only batch (segment.ts, SEGMENTS.md). Those references are folded into the
// conversation index every few seconds (compaction.ts).
import type { Logger } from '../../../logger.ts';
import { timeOrderedId } from '../../telemetry-records.ts';
import type { TelemetryEvent, TurnCallRecord } from '../../telemetry-records.ts';
import type { TelemetryWriter } from '../../repos.ts';
import type { Kv, KvWrite } from '../kv.ts';
import { codecs } from './codec.ts';
import type { PendingRefs } from './compaction.ts';
import { pendingRefsKey } from './keys.ts';
import { createSegmentBuilder } from './segment.ts';

const TABLES = ['telemetry', 'turnCalls'] as const;

export function createLmdbTelemetryWriter(kv: Kv, logger?: Logger): TelemetryWriter {
  const codec = codecs();
  const builders = { telemetry: createSegmentBuilder(), turnCalls: createSegmentBuilder() };
  const unencodedEvents: TelemetryEvent[] = [];
  const unencodedCalls: TurnCallRecord[] = [];
  let encodeQueued = false;
  let flushSeq = 0;
  /** Records taken by a flush whose write has not finished (still `pending`). */
  let writing = 0;

  // The arrays are emptied in place, not replaced: a fresh array per event-loop turn was ~1 KB of garbage per turn.
  const encodeInto = <T extends { id: string; conversationId?: string }>(
    table: 'telemetry' | 'turnCalls',
    what: string,
    records: T[],
    encode: (r: T) => Uint8Array,
  ) => {
    for (const r of records) {
      try {
        builders[table].add(r.id, r.conversationId, encode(r));
      } catch (err) {
        logger?.warn({ err, type: (r as { type?: string }).type }, `telemetry ${what} not encodable, dropped`);
      }
    }
    records.length = 0;
  };
  const encodePending = () => {
    encodeQueued = false;
    encodeInto('telemetry', 'event', unencodedEvents, codec.telemetry.encode);
    encodeInto('turnCalls', 'turn call', unencodedCalls, codec.turnCalls.encode);
  };
  const queueEncode = () => {
    if (encodeQueued) return;
    encodeQueued = true;
    setImmediate(encodePending);
  };

  return {
    addEvent(e) {
      unencodedEvents.push(e);
      queueEncode();
    },
    addTurnCall(r) {
      unencodedCalls.push(r);
      queueEncode();
    },
    pending: () => unencodedEvents.length + unencodedCalls.length + builders.telemetry.count + builders.turnCalls.count + writing,
    async flush() {
      encodePending();
      if (builders.telemetry.count + builders.turnCalls.count === 0) return 0;
      const writes: KvWrite[] = [];
      let records = 0;
      const flushId = timeOrderedId(Date.now(), (flushSeq = (flushSeq + 1) % 1e8));
      for (const table of TABLES) {
        records += builders[table].count;
        const pending: PendingRefs = [];
        for (const segment of builders[table].cut()) {
          writes.push({ table, key: segment.key, value: segment.value });
          for (const [conversationId, offsets] of segment.refs) pending.push([conversationId, segment.key, offsets]);
        }
        if (pending.length) writes.push({ table, key: pendingRefsKey(flushId), value: pending });
      }
      if (writes.length === 0) return 0;
      writing += records;
      try {
        await kv.writeBatch(writes);
      } finally {
        writing -= records;
      }
      return records;
    },
  };
}
