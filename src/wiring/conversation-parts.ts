// The conversation host and what moves its conversations between nodes (issue 31, part 5: made here, started and
// stopped by the `conversations` and `cluster` plugins).
import type { Services } from '../services.ts';
import { createConversationHost, type ChannelSink, type ConversationMeta, type OutputRecorder, type Pending } from '../conversations/host.ts';
import { handoffNotice } from '../conversations/handoff-notices.ts';
import { createLlmStep } from '../conversations/llm-step.ts';
import { createToolInvoker } from '../conversations/tool-invoker.ts';
import { conversationEvent } from '../webhooks/events.ts';
import type { Webhooks } from '../webhooks/delivery.ts';
import { createConversationOwnership } from '../cluster/conversation-ownership.ts';
import { notifyInbox, watchInbox } from '../cluster/inbox-notices.ts';
import { createTakeover } from '../cluster/takeover.ts';
import { createClock } from '../clock.ts';
import { inboxObserver } from '../inbox/index.ts';
import type { Ports } from './ports.ts';
import type { ChannelParts, ClusterParts, ToolingParts } from './base-parts.ts';

interface Made {
  cluster: ClusterParts;
  channels: ChannelParts;
  tooling: ToolingParts;
}

export type ConversationParts = ReturnType<typeof makeConversations>;

/** The outputs' webhook events (`message.customer`, `handoff.requested`…), prepared in the write that stores them. */
function webhookRecorder(webhooks: Pick<Webhooks, 'prepare'>): OutputRecorder {
  const events = (meta: ConversationMeta, written: Pending[]) => written.map((entry) => conversationEvent(meta, entry)).filter((e) => e !== undefined);
  return {
    wants: (meta, written) => written.some((entry) => conversationEvent(meta, entry) !== undefined),
    record: (tx, meta, written) => webhooks.prepare(tx, events(meta, written)),
  };
}

function makeHost(services: Services, ports: Ports, made: Made) {
  const { config, store } = services;
  const { supervisor, hub, membership } = made.cluster;
  const { webhooks } = made.channels;
  const { llm, tools, outcomes, inboxLive } = made.tooling;
  const llmStep = createLlmStep({ services, llm, hub: tools, history: store.history });
  const sinks: Partial<Record<'web' | 'whatsapp', ChannelSink>> = made.channels.sinks;
  const host = createConversationHost({
    services,
    llmStep,
    invokeTool: createToolInvoker({ tools, customers: store.customers, config }),
    sinks,
    sdk: { registered: () => hub.registeredCount() > 0, onChange: (listener) => hub.onChange(listener) },
    // A clustered store is shared by several nodes: claims, fencing and inboxes. When one process holds the store it
    // owns every conversation, so nothing is claimed or checked.
    cluster: store.capabilities.clustered
      ? {
          ownership: createConversationOwnership({ ownership: store.ownership, nodeId: () => membership.nodeId() }),
          notifyOwner: (nodeId, conversationId) => notifyInbox(store.bus, nodeId, conversationId),
          holdsLease: () => membership.holdsLease(),
        }
      : undefined,
    recorders: [
      // The webhook events of the outputs (before the outcome's own `conversation.outcome` events).
      ...(config.webhooks.endpoints.length ? [webhookRecorder(webhooks)] : []),
      // Every conversation's outcome (docs/outcomes.md), folded in by the write that stores the messages deciding it.
      outcomes.recorder,
    ],
    observers: [
      (meta, entry) => {
        const notice = handoffNotice(meta, entry);
        if (notice) hub.broadcast(notice);
      },
      inboxObserver(inboxLive),
    ],
    // Lifecycle only: per-message activity times stay in the host (the supervisor machine would copy its context per
    // message).
    lifecycle: {
      activated: (meta, actor) => supervisor.conversationActivated(meta.conversationId, actor),
      passivated: (id) => {
        llmStep.forget(id);
        supervisor.conversationPassivated(id);
      },
    },
  });
  return ports.host.provide(host);
}

export function makeConversations(services: Services, ports: Ports, made: Made) {
  const { config, clock, logger, store } = services;
  const { membership } = made.cluster;
  const clustered = store.capabilities.clustered;
  const host = makeHost(services, ports, made);
  // This node's conversations: wake-ups for their inboxes, takeover of those whose node is gone, and a stop of every
  // actor when the lease is lost (another node may be claiming them already).
  const takeover = createTakeover({
    ownership: store.ownership,
    inbox: store.inbox,
    bus: store.bus,
    host,
    status: () => membership.status(),
    nodeId: () => membership.nodeId(),
    clock: createClock(),
    now: () => clock.now(),
    logger,
    everyMs: Math.max(200, Math.round((config.cluster.lease_seconds * 1000) / 5)),
  });
  const stopInboxWatch = clustered
    ? watchInbox(
        store.bus,
        () => membership.nodeId(),
        (id) => void host.drainInbox(id).catch(() => undefined),
      )
    : undefined;
  // When one process holds the store nobody else can take its conversations over: a lease lost to a stalled event
  // loop must not stop them (and no sweep would start them again).
  if (clustered) membership.onLost(() => host.relinquishAll());
  // A node that joins says so, and the others read the cluster at once: they relay widget frames to it from then on.
  const stopHellos = clustered ? store.bus.subscribe('hello', () => void membership.refreshView()) : undefined;
  const sayHello = () => (clustered ? store.bus.publish('hello', membership.nodeId()).catch(() => undefined) : Promise.resolve());
  membership.onJoined(() => void sayHello());
  return { host, takeover, stopInboxWatch, stopHellos, sayHello };
}
