// Live notices (human handoff) for the SDK connections of every node: the node where the conversation runs sends them
// to its own connections at once and on the bus; every other node hands them to its own connections. Live only, as on
// one node: an SDK that is not connected when it is sent does not get it (the signed webhooks are the durable record).
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import type { SdkHub } from '../services.ts';
import type { ClusterBus } from '../store/repos.ts';
import { BroadcastNotice, TOPICS } from '../cluster/wire.ts';

export interface SdkBroadcastRelay {
  /** To this node's connections now, and to the other nodes'; returns how many of this node's got it. */
  broadcast: SdkHub['broadcast'];
  start(): void;
  stop(): void;
}

export function createSdkBroadcastRelay(o: { bus: ClusterBus; local: Pick<SdkHub, 'broadcast'>; logger: Logger }): SdkBroadcastRelay {
  const log = o.logger.child({ component: 'sdk-broadcast' });
  const instance = randomUUID();
  let unsubscribe: (() => void) | undefined;

  const onNotice = (payload: string) => {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return void log.warn('a broadcast notice that is not JSON was ignored');
    }
    const notice = BroadcastNotice.safeParse(json);
    if (!notice.success) return void log.warn({ issues: notice.error.issues.slice(0, 3) }, 'a broadcast notice was refused by its schema');
    if (notice.data.instance !== instance) o.local.broadcast(notice.data.frame);
  };

  return {
    broadcast(frame) {
      const n = o.local.broadcast(frame);
      if (unsubscribe) {
        const notice: BroadcastNotice = { instance, frame };
        void o.bus
          .publish(TOPICS.broadcast, JSON.stringify(notice))
          .catch((err: unknown) => log.warn({ err: { message: (err as Error).message }, type: frame.type }, 'a notice could not reach the other nodes'));
      }
      return n;
    },
    start() {
      unsubscribe ??= o.bus.subscribe(TOPICS.broadcast, onNotice);
    },
    stop() {
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}
