// Widget frames across nodes (issue 17, part 5): a customer's widget may be open on any node, while the node that
// owns the conversation writes its replies. Every frame pushed to a customer's widgets here is also published on the
// cluster bus (topic `web`) while another node is alive, and frames from other nodes are pushed to the widgets open
// here. Publishes go out one at a time, each carrying every frame queued meanwhile, so other nodes get them in the
// order they were pushed (two notices sent on two pooled connections may arrive in either order). Live only, like the
// socket itself: a widget that misses a frame (a node's bus connection was lost) has it all in the history it reads
// when it connects again.
import { z } from 'zod';
import type { Logger } from '../logger.ts';
import type { ClusterBus } from '../store/repos.ts';
import { WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';

const WEB_TOPIC = 'web';

/** One wire message of the `web` topic: the publishing node and its frames, in order. */
export const WebRelayMessage = z.object({
  from: z.string(),
  frames: z.array(z.object({ customerId: z.string(), frame: WidgetServerFrame })),
});
export type WebRelayMessage = z.infer<typeof WebRelayMessage>;

export interface WebRelayOptions {
  bus: Pick<ClusterBus, 'publish' | 'subscribe'>;
  nodeId: () => string;
  /** Another node is alive (nothing is published while this node is alone). */
  othersAlive: () => boolean;
  logger: Logger;
}

export function createWebRelay(o: WebRelayOptions) {
  const log = o.logger.child({ component: 'cluster', part: 'web-relay' });
  let queued: WebRelayMessage['frames'] = [];
  let sending = false;

  const flush = () => {
    if (sending || queued.length === 0) return;
    const message: WebRelayMessage = { from: o.nodeId(), frames: queued };
    queued = [];
    sending = true;
    o.bus
      .publish(WEB_TOPIC, JSON.stringify(message))
      .catch((err: unknown) => log.debug({ err: { message: (err as Error).message }, frames: message.frames.length }, 'widget frames not relayed'))
      .finally(() => {
        sending = false;
        flush();
      });
  };

  return {
    /** For createWebSessions: a frame pushed here, to be relayed. */
    relay(customerId: string, frame: WidgetServerFrame) {
      if (!o.othersAlive()) return;
      queued.push({ customerId, frame });
      flush();
    },
    /** Pushes other nodes' frames with `pushHere`; returns the unsubscribe. */
    listen(pushHere: (customerId: string, frame: WidgetServerFrame) => void): () => void {
      return o.bus.subscribe(WEB_TOPIC, (payload) => {
        let message: WebRelayMessage;
        try {
          message = WebRelayMessage.parse(JSON.parse(payload));
        } catch (err) {
          return void log.warn({ err: { message: (err as Error).message } }, 'a relayed widget message was not understood');
        }
        if (message.from === o.nodeId()) return;
        for (const { customerId, frame } of message.frames) pushHere(customerId, frame);
      });
    },
  };
}
