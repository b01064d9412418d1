// Deletes telemetry older than `telemetry.retention_days`, a segment at a time
// (once its newest record is past), in batches, on a timer of the injected clock. Starting, it first indexes records older than the index.
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Key, Store } from '../store/types.ts';
import type { PendingRefs } from './compaction.ts';
import { backfillConversationIndex } from './index-backfill.ts';
import { conversationIndexRange, keyAt, legacyConversationIndexRange, PENDING_END, PENDING_START } from './keys.ts';
import { conversationsOf, countOf, maxIdOf } from './segment.ts';
import type { TelemetryTable } from './segment-reader.ts';

const BATCH = 200; // segments (or legacy one-record values) per transaction
const EVERY_MS = 3600_000;

/** Drops references to `gone` segments from an index entry or a pending-references value; undefined when unchanged. */
function withoutRefs(value: unknown, gone: Set<string>, pending: boolean): unknown[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const keyOf = (ref: unknown) => (pending ? (ref as PendingRefs[number])[1] : typeof ref === 'string' ? ref : (ref as unknown[])[0]) as string;
  const kept = value.filter((ref) => !gone.has(keyOf(ref)));
  return kept.length === value.length ? undefined : kept;
}

export function createRetentionPruner(o: { store: Store; clock: Clock; retentionDays: number; logger: Logger }) {
  let timer: TimerHandle | undefined;
  /** Removes the segments whose newest record is older than `cutoff`, and every reference to them. */
  const pruneTable = async (name: TelemetryTable, cutoff: string) => {
    let total = 0;
    let start = '';
    const table = o.store.table<unknown>(name);
    for (;;) {
      const gone = new Set<string>();
      const conversations = new Set<string>();
      let records = 0;
      let last: string | undefined;
      for (const { key, value } of table.range({ start, end: cutoff, limit: BATCH })) {
        last = key as string;
        // A segment straddling the cutoff stays until its newest record is past it.
        if (maxIdOf(last, value) >= cutoff) continue;
        gone.add(last);
        records += countOf(value);
        for (const c of conversationsOf(value)) conversations.add(c);
      }
      if (last === undefined) return total;
      start = `${last}\u0000`;
      if (gone.size === 0) continue;
      const rewrites: { key: Key; value: unknown[] }[] = [];
      // Index entries are keyed by their smallest segment: those at or past the cutoff reference nothing pruned.
      for (const c of conversations) {
        const legacy = legacyConversationIndexRange(c, cutoff);
        for (const range of legacy ? [conversationIndexRange(c, cutoff), legacy] : [conversationIndexRange(c, cutoff)]) {
          for (const { key, value } of table.range(range)) {
            const kept = withoutRefs(value, gone, false);
            if (kept) rewrites.push({ key, value: kept });
          }
        }
      }
      for (const { key, value } of table.range({ start: PENDING_START, end: PENDING_END })) {
        const kept = withoutRefs(value, gone, true);
        if (kept) rewrites.push({ key, value: kept });
      }
      await o.store.transaction(() => {
        for (const k of gone) table.removeInTx(k);
        for (const r of rewrites) {
          if (r.value.length) table.putInTx(r.key, r.value);
          else table.removeInTx(r.key);
        }
      });
      total += records;
    }
  };
  const prune = async () => {
    const cutoff = keyAt(o.clock.now() - o.retentionDays * 86_400_000);
    const removed = (await pruneTable('telemetry', cutoff)) + (await pruneTable('turnCalls', cutoff));
    if (removed) o.logger.info({ removed }, 'telemetry pruned');
    return removed;
  };
  const schedule = () => {
    timer = o.clock.setTimeout(() => {
      void prune()
        .catch((err) => o.logger.warn({ err }, 'telemetry prune failed'))
        .finally(schedule);
    }, EVERY_MS);
  };
  return {
    prune,
    start() {
      void backfillConversationIndex(o.store, o.logger)
        .catch((err) => o.logger.warn({ err }, 'telemetry index backfill failed'))
        .then(prune)
        .catch((err) => o.logger.warn({ err }, 'telemetry prune failed'));
      schedule();
    },
    stop() {
      o.clock.clearTimeout(timer);
    },
  };
}
