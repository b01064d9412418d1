// Deletes telemetry older than `telemetry.retention_days`, hourly, on a timer of the injected clock.
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Store } from '../store/repos.ts';

const EVERY_MS = 3600_000;

export function createRetentionPruner(o: { store: Store; clock: Clock; retentionDays: number; logger: Logger }) {
  let timer: TimerHandle | undefined;
  const prune = async () => {
    const removed = await o.store.telemetry.prune(o.clock.now() - o.retentionDays * 86_400_000);
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
      o.store.telemetry.start();
      void prune().catch((err) => o.logger.warn({ err }, 'telemetry prune failed'));
      schedule();
    },
    stop() {
      o.clock.clearTimeout(timer);
    },
  };
}
