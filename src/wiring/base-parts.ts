// The parts every other part stands on, made before any of them starts (issue 31, part 5): the supervisor, the SDK
// hubs and this node's membership of the cluster; the channels' halves the conversations send through; the tools,
// the LLM and outcomes. The parts that need each other both ways meet through the ports made first (`ports.ts`).
import { join } from 'node:path';
import { PROJECT_ROOT } from '../config/load.ts';
import type { Services } from '../services.ts';
import { createCustomerRepo } from '../customers/repo.ts';
import { createWebSessions } from '../web/sessions.ts';
import { createHandoffOutlook } from '../handoff/outlook.ts';
import { withHandoffNotices } from '../handoff/web-notices.ts';
import { createSdkHub } from '../sdk/hub.ts';
import { createSupervisorRuntime } from '../runtime/supervisor.ts';
import { createLlmFromConfig } from '../llm/factory.ts';
import { createLlmFailureWatch } from '../llm/loud-failures.ts';
import { createScrubber } from '../log-scrub.ts';
import { configuredSecrets } from '../secret.ts';
import { createClock } from '../clock.ts';
import { createOutbox, createWhatsAppChannel } from '../whatsapp/channel.ts';
import { createWebhooks } from '../webhooks/delivery.ts';
import { telemetryEvent, type NewWebhookEvent } from '../webhooks/events.ts';
import { createClusterMembership } from '../cluster/membership.ts';
import { createWebRelay } from '../web/relay.ts';
import { createClusterHub } from '../sdk/cluster-hub.ts';
import { withToolSources } from '../runtime/tool-source.ts';
import { createMcpManager } from '../mcp/manager.ts';
import { createKnowledgeFeature } from '../knowledge/index.ts';
import { createOutcomeTracker } from '../outcomes/tracker.ts';
import { createExperienceEstimator } from '../outcomes/experience.ts';
import { DEMO_HELP_FOLDER, seedDemoArticles } from '../demo/knowledge.ts';
import { createInboxLive } from '../inbox/index.ts';
import type { Ports } from './ports.ts';

export type ClusterParts = ReturnType<typeof makeCluster>;
export type ChannelParts = ReturnType<typeof makeChannels>;
export type ToolingParts = Awaited<ReturnType<typeof makeTooling>>;

/** The supervisor, this node's SDK hub, its membership of the cluster and the hub across nodes. */
export function makeCluster(services: Services, ports: Ports) {
  const { config, clock, logger, telemetry, store } = services;
  const supervisor = createSupervisorRuntime({
    clock,
    logger,
    telemetry,
    maxSdkConnections: 32,
    idleMs: config.session.idle_minutes * 60_000,
    // The supervisor decides when; the host knows each conversation's last activity.
    passivate: (idleBefore) => {
      const host = ports.host.get();
      return host.passivate(host.idleSince(idleBefore));
    },
  });
  const localHub = createSdkHub({ services, supervisor });
  const membership = createClusterMembership({
    nodes: store.nodes,
    ownership: store.ownership,
    // Real time, not the services' clock: a lease is the database's real time, and a test clock (moved by an offset,
    // or a manual one that only moves when told) must neither end it nor hold its heartbeat back.
    clock: createClock(),
    logger,
    nodeId: config.cluster.node_id,
    leaseSeconds: config.cluster.lease_seconds,
    load: () => ({ sdkConnections: localHub.connectionCount(), sdkFunctions: localHub.catalog().length, conversations: ports.host.peek()?.activeCount() ?? 0 }),
  });
  // Job notices are for the other nodes; a node that died may have committed jobs it had not announced yet
  // (PostgreSQL announces after commit, and not while it sees no other node): look again.
  store.setJobNoticeAudience(() => membership.peersAlive());
  membership.onPeersGone(() => store.rescanJobs());
  // Recorded for the dashboard and counted by /metrics (parley_cluster_nodes_lost_total, the "node lost" alert).
  membership.onPeersGone((nodes) => telemetry.event({ type: 'cluster.peers_gone', data: { nodes } }));
  membership.onLost((loss) => telemetry.event({ type: 'cluster.lease_lost', data: { nodeId: loss.nodeId, reason: loss.reason } }));
  // The features reach SDK connections on every node through this hub.
  const hub = createClusterHub({ local: localHub, bus: store.bus, membership, clock: createClock(), logger, invokeTimeoutMs: config.safety.invoke_timeout_ms });
  return { supervisor, localHub, membership, hub };
}

/** The web and WhatsApp channels' halves that the conversations send through, and webhooks. */
export function makeChannels(services: Services, ports: Ports, cluster: ClusterParts) {
  const { config, clock, logger, telemetry, store } = services;
  const { membership, hub } = cluster;
  const clustered = store.capabilities.clustered;
  const customers = createCustomerRepo(store, clock);
  const webRelay = createWebRelay({ bus: store.bus, nodeId: () => membership.nodeId(), othersAlive: () => clustered && membership.peersAlive(), logger });
  const sessions = createWebSessions(clock.now, webRelay.relay);
  const stopWebRelay = clustered ? webRelay.listen((customerId, frame) => sessions.pushFromPeer(customerId, frame)) : undefined;
  const outbox = createOutbox(clock);
  // What a customer waiting for a person is told (issue 35): business hours, the usual wait, the offline notice.
  const outlook = createHandoffOutlook({ config: config.handoff, clock, telemetry: store.telemetry, logger });
  const noticeDeps = { outlook, store, now: clock.now, logger };
  const whatsapp = createWhatsAppChannel({
    services,
    customers,
    hub,
    host: ports.host.get,
    outbox,
    outlook,
    rate: (id, rating) => ports.outcomes.get().rate(id, rating),
  });
  const webhooks = createWebhooks(services);
  const emitWebhook = (e: NewWebhookEvent | undefined) => {
    if (e) void webhooks.emit(e).catch((err) => logger.error({ err, type: e.type }, 'webhook event could not be stored'));
  };
  const stopWebhookFeed = config.webhooks.endpoints.length ? telemetry.subscribe({ event: (e) => emitWebhook(telemetryEvent(e)) }) : undefined;
  const sinks = { web: withHandoffNotices(sessions, noticeDeps), whatsapp: whatsapp.sink };
  return { customers, sessions, stopWebRelay, outbox, noticeDeps, whatsapp, webhooks, stopWebhookFeed, sinks };
}

/** The tools the model sees and calls, the LLM, outcomes and the inbox's live feed. */
export async function makeTooling(services: Services, ports: Ports, cluster: ClusterParts, channels: ChannelParts) {
  const { config, clock, logger, telemetry, store } = services;
  const { sessions, whatsapp, webhooks } = channels;
  const llmFailures = createLlmFailureWatch({ logger, telemetry, clock, scrub: createScrubber(configuredSecrets(config, services.secret)).text });
  const llm = createLlmFromConfig(config.llm, {
    now: clock.now,
    sleep: (ms) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms)),
    onAttemptFailed: llmFailures.failed,
    onAttemptSucceeded: llmFailures.succeeded,
  });
  // Every node's SDK functions and the MCP servers' tools (one seam).
  const mcp = createMcpManager({ servers: config.tools.mcp, clock, logger, version: services.version });
  // The knowledge base's `search_knowledge` (issue 36): offered once it has articles (read now, before any turn).
  const knowledge = createKnowledgeFeature(services);
  if (config.demo.knowledge) await seedDemoArticles(knowledge.knowledge, join(PROJECT_ROOT, DEMO_HELP_FOLDER), logger);
  await knowledge.tool.refresh();
  const tools = withToolSources(cluster.hub, [mcp, knowledge.tool]);
  const outcomes = ports.outcomes.provide(
    createOutcomeTracker({
      services,
      webhooks: config.webhooks.endpoints.length ? (tx, events) => webhooks.prepare(tx, events) : undefined,
      // CSAT (`outcomes.csat`): open widgets are asked at once (a closed one on its next `ready`), WhatsApp with buttons.
      onDecided: (r) => {
        if (config.outcomes.estimate_experience) void estimateExperience(r);
        if (!config.outcomes.csat) return;
        if (r.channel === 'web') sessions.push(r.customerId, { type: 'rate' });
        else void whatsapp.askRating(r).catch((err) => logger.warn({ err }, 'WhatsApp rating request not sent'));
      },
    }),
  );
  const estimateExperience = createExperienceEstimator({ services, llm, tracker: outcomes });
  // The agent inbox's live feed: told of handoffs, customer messages and agent replies by an observer of the host.
  // Real time, as the membership's: its presence heartbeat between nodes must not stop under a test's manual clock.
  const inboxLive = createInboxLive({ bus: store.bus, clock: createClock(), logger });
  return { llmFailures, llm, mcp, knowledge, tools, outcomes, inboxLive };
}
