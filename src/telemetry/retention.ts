// Deletes telemetry older than `telemetry.retention_days`, in batches, on a
// timer of the injected clock.
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Store } from '../store/types.ts';

const BATCH = 5000;
const EVERY_MS = 3600_000;

export function createRetentionPruner(o: { store: Store; clock: Clock; retentionDays: number; logger: Logger }) {
  let timer: TimerHandle | undefined;
  const pruneTable = async (name: 'telemetry' | 'turnCalls', cutoff: string) => {
    let total = 0;
    for (;;) {
      const table = o.store.table<unknown>(name);
      const keys = [...table.range({ end: cutoff, limit: BATCH })].map((r) => r.key);
      if (keys.length === 0) return total;
      await o.store.transaction(() => keys.forEach((k) => table.removeInTx(k)));
      total += keys.length;
      if (keys.length < BATCH) return total;
    }
  };
  const prune = async () => {
    const cutoff = `${String(Math.floor(o.clock.now() - o.retentionDays * 86_400_000)).padStart(13, '0')}-`;
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
      void prune().catch((err) => o.logger.warn({ err }, 'telemetry prune failed'));
      schedule();
    },
    stop() {
      o.clock.clearTimeout(timer);
    },
  };
}
