// Deletes telemetry older than `telemetry.retention_days`, in batches, on a
// timer of the injected clock. Starting, it first indexes records older than the index.
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Key, Store } from '../store/types.ts';
import { backfillConversationIndex } from './index-backfill.ts';
import { conversationIndexPrefix, keyAt } from './keys.ts';

const BATCH = 5000;
const EVERY_MS = 3600_000;

export function createRetentionPruner(o: { store: Store; clock: Clock; retentionDays: number; logger: Logger }) {
  let timer: TimerHandle | undefined;
  const pruneTable = async (name: 'telemetry' | 'turnCalls', cutoff: string) => {
    let total = 0;
    const table = o.store.table<{ conversationId?: string } | string[]>(name);
    for (;;) {
      const keys: Key[] = [];
      const conversations = new Set<string>();
      for (const { key, value } of table.range({ end: cutoff, limit: BATCH })) {
        keys.push(key);
        const c = (value as { conversationId?: string }).conversationId;
        if (c !== undefined) conversations.add(c);
      }
      if (keys.length === 0) return total;
      // Index entries of these conversations: drop the pruned ids (an entry is keyed by its smallest id).
      const entries: { key: Key; keep: string[] }[] = [];
      for (const c of conversations) {
        for (const { key, value } of table.range({ start: conversationIndexPrefix(c), end: conversationIndexPrefix(c) + cutoff })) {
          entries.push({ key, keep: (value as string[]).filter((id) => id >= cutoff) });
        }
      }
      await o.store.transaction(() => {
        keys.forEach((k) => table.removeInTx(k));
        for (const e of entries) {
          if (e.keep.length) table.putInTx(e.key, e.keep);
          else table.removeInTx(e.key);
        }
      });
      total += keys.length;
      if (keys.length < BATCH) return total;
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
