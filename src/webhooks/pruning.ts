// Webhook records do not grow without end (issue 34, part 2): the ids of finished deliveries (the de-duplication
// record) and dead letters older than `webhooks.keep_days` are deleted at start and then hourly, on a timer of the
// injected clock (like telemetry's retention and WhatsApp's records).
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';

export const PRUNE_EVERY_MS = 3600_000;

export function createWebhookPruner(o: { clock: Clock; logger: Logger; keepDays: number; prune: (before: number) => Promise<number> }) {
  let timer: TimerHandle | undefined;
  let stopped = false;
  const prune = async () => {
    const removed = await o.prune(o.clock.now() - o.keepDays * 86_400_000);
    if (removed) o.logger.info({ removed }, 'webhook records pruned');
    return removed;
  };
  const quietly = () => prune().catch((err: unknown) => void o.logger.warn({ err }, 'webhook prune failed'));
  const schedule = () => {
    if (stopped) return;
    timer = o.clock.setTimeout(() => void quietly().finally(schedule), PRUNE_EVERY_MS);
  };
  return {
    prune,
    start() {
      void quietly();
      schedule();
    },
    stop() {
      stopped = true;
      o.clock.clearTimeout(timer);
    },
  };
}
