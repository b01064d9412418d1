// Deletes telemetry older than `telemetry.retention_days`, in batches, on a
// timer of the injected clock. Starting, it first indexes records older than the index.
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Key, Store } from '../store/types.ts';
import { backfillConversationIndex } from './index-backfill.ts';
import { conversationIndexKey, keyAt } from './keys.ts';

const BATCH = 5000;
const EVERY_MS = 3600_000;

export function createRetentionPruner(o: { store: Store; clock: Clock; retentionDays: number; logger: Logger }) {
  let timer: TimerHandle | undefined;
  const pruneTable = async (name: 'telemetry' | 'turnCalls', cutoff: string) => {
    let total = 0;
    for (;;) {
      const table = o.store.table<{ conversationId?: string }>(name);
      const keys: Key[] = [];
      for (const { key, value } of table.range({ end: cutoff, limit: BATCH })) {
        keys.push(key);
        if (value.conversationId !== undefined) keys.push(conversationIndexKey(value.conversationId, key as string));
      }
      if (keys.length === 0) return total;
      await o.store.transaction(() => keys.forEach((k) => table.removeInTx(k)));
      const records = keys.filter((k) => !String(k).startsWith('~')).length;
      total += records;
      if (records < BATCH) return total;
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
