// The features around the conversations, made once the conversations are (issue 31, part 5): sign-in, proactive
// messages, the reflection daemon, agents, metrics and telemetry retention.
import { createActor, fromPromise } from 'xstate';
import type { Services } from '../services.ts';
import { createIdentity } from '../identity/index.ts';
import { createProactiveLedger } from '../proactive/ledger.ts';
import { createProactiveService } from '../proactive/service.ts';
import { createProactiveDelivery } from '../proactive/delivery.ts';
import { daemonMachine } from '../../machines/daemon.ts';
import { createReflectionCycle } from '../daemon/reflection.ts';
import { xstateClock } from '../clock.ts';
import { createAgents } from '../agents/index.ts';
import { createMetrics } from '../telemetry/metrics.ts';
import { createRetentionPruner } from '../telemetry/retention.ts';
import { withAcceptedWebhook } from '../webhooks/proactive-accepted.ts';
import type { ChannelParts, ClusterParts, ToolingParts } from './base-parts.ts';
import type { ConversationParts } from './conversation-parts.ts';

interface Made {
  cluster: ClusterParts;
  channels: ChannelParts;
  tooling: ToolingParts;
  conversations: ConversationParts;
}

export type FeatureParts = ReturnType<typeof makeFeatures>;

function makeProactive(services: Services, made: Made) {
  const { config, clock, telemetry, store } = services;
  const { customers, sessions, whatsapp, webhooks } = made.channels;
  const ledger = createProactiveLedger({ store, clock, dailyCap: config.proactive.daily_cap, dedupWindowHours: config.proactive.dedup_window_hours });
  const proactive = createProactiveService({
    store,
    clock,
    customers,
    ledger,
    enabled: () => config.proactive.enabled,
    deliver: withAcceptedWebhook(
      createProactiveDelivery({ services, sessions, whatsapp: () => (config.channels.whatsapp.enabled ? whatsapp.outbound : undefined) }),
      config.webhooks.endpoints.length ? webhooks : undefined,
      clock,
    ),
    telemetry,
  });
  return { ledger, proactive };
}

function makeMetrics(services: Services, made: Made) {
  const { clock, telemetry, store } = services;
  const { host } = made.conversations;
  const { hub, membership } = made.cluster;
  const { whatsapp, webhooks } = made.channels;
  return createMetrics(telemetry, {
    activeConversations: () => host.activeCount(),
    sdkConnections: () => hub.connectionCount(),
    whatsappQueueDepth: () => ({ inbound: whatsapp.inbound.depth(), outbound: whatsapp.outboundQueue.depth() }),
    withHuman: () => host.list().filter((c) => c.state === 'withHuman').length,
    handoffs: () =>
      host.list().flatMap((c) => (c.human ? [{ since: c.human.since, answered: c.human.agent !== undefined, agentId: c.human.agent?.agentId }] : [])),
    webhooks: () => webhooks.counters(),
    storeDatabase: () => store.checks().database,
    clusterNodes: () => membership.view().nodes.length,
    now: () => clock.now(),
  });
}

export function makeFeatures(services: Services, made: Made) {
  const { config, clock, logger, store } = services;
  const identity = createIdentity(services);
  const { ledger, proactive } = makeProactive(services, made);
  const daemon = config.daemon.enabled
    ? createActor(
        daemonMachine.provide({
          actors: { runCycle: fromPromise(createReflectionCycle({ services, llm: made.tooling.llm, sendFollowup: (req) => proactive.send(req) })) },
        }),
        { input: { intervalMs: config.daemon.interval_seconds * 1000 }, clock: xstateClock(clock) },
      )
    : undefined;
  const agents = createAgents(services);
  const metrics = makeMetrics(services, made);
  const retention = createRetentionPruner({ store, clock, retentionDays: config.telemetry.retention_days, logger });
  return { identity, ledger, proactive, daemon, agents, metrics, retention };
}
