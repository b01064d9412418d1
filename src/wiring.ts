// Assembles the features of one Parley process, in dependency order.
import { join } from 'node:path';
import { PROJECT_ROOT } from './config/load.ts';
import type { HandoffInfo } from './store/model.ts';
import type { FastifyInstance } from 'fastify';
import { createActor, fromPromise } from 'xstate';
import type { Services } from './services.ts';
import type { LiveActor } from './runtime/supervisor.ts';
import { createCustomerRepo } from './customers/repo.ts';
import { createConversationHost, type ChannelSink, type ConversationHost } from './conversations/host.ts';
import { handoffNotice } from './conversations/handoff-notices.ts';
import { createLlmStep } from './conversations/llm-step.ts';
import { createToolInvoker } from './conversations/tool-invoker.ts';
import { createWebSessions } from './web/sessions.ts';
import { widgetGatewayPlugin } from './web/gateway.ts';
import { createHandoffOutlook } from './handoff/outlook.ts';
import { readyNotice, withHandoffNotices } from './handoff/web-notices.ts';
import { sdkGatewayPlugin } from './sdk/gateway.ts';
import { createSdkHub } from './sdk/hub.ts';
import { createSupervisorRuntime } from './runtime/supervisor.ts';
import { createLlmFromConfig } from './llm/factory.ts';
import { createLlmFailureWatch, type LlmFailureWatch } from './llm/loud-failures.ts';
import { createScrubber } from './log-scrub.ts';
import { configuredSecrets } from './secret.ts';
import { createIdentity } from './identity/index.ts';
import { identityPlugin } from './identity/routes.ts';
import { createAuthLimits } from './identity/limits.ts';
import { createWidgetSignIn } from './identity/widget-sign-in.ts';
import { createVisitors } from './identity/visitors.ts';
import { demoPlugin } from './demo/routes.ts';
import { createProactiveLedger } from './proactive/ledger.ts';
import { createProactiveService } from './proactive/service.ts';
import { createProactiveDelivery } from './proactive/delivery.ts';
import { proactivePlugin } from './proactive/routes.ts';
import { daemonMachine } from '../machines/daemon.ts';
import { createReflectionCycle } from './daemon/reflection.ts';
import { createClock, xstateClock } from './clock.ts';
import { createOutbox, createWhatsAppChannel, type WhatsAppChannel } from './whatsapp/channel.ts';
import { customersPlugin } from './customers/routes.ts';
import { conversationsPlugin } from './conversations/routes.ts';
import { createAgents } from './agents/index.ts';
import { normalizePhone } from './whatsapp/phone.ts';
import { scenarioExportPlugin } from './ops/scenario-export.ts';
import { whatsappTestPlugin } from './ops/test-mode.ts';
import { whatsappMediaPlugin } from './whatsapp/media.ts';
import { DEFAULT_GRAPH_URL } from './config/schema.ts';
import { createMetrics } from './telemetry/metrics.ts';
import { createRetentionPruner } from './telemetry/retention.ts';
import { telemetryPlugin } from './telemetry/routes.ts';
import { registerWebSocketSupport, routeUpgrades } from './http/websocket-scope.ts';
import { createWebhooks } from './webhooks/delivery.ts';
import { conversationEvent, telemetryEvent, type NewWebhookEvent } from './webhooks/events.ts';
import { withAcceptedWebhook } from './webhooks/proactive-accepted.ts';
import { webhooksPlugin } from './webhooks/routes.ts';
import { createClusterMembership, type ClusterMembership } from './cluster/membership.ts';
import { createConversationOwnership } from './cluster/conversation-ownership.ts';
import { notifyInbox, watchInbox } from './cluster/inbox-notices.ts';
import { createTakeover } from './cluster/takeover.ts';
import { createWebRelay } from './web/relay.ts';
import { createClusterHub, type ClusterHub } from './sdk/cluster-hub.ts';
import { withToolSources } from './runtime/tool-source.ts';
import { createMcpManager, type McpManager } from './mcp/manager.ts';
import { createKnowledgeFeature, type Knowledge } from './knowledge/index.ts';
import { createOutcomeTracker } from './outcomes/tracker.ts';
import { outcomesPlugin } from './outcomes/routes.ts';
import { widgetFeedback } from './outcomes/feedback.ts';
import { createExperienceEstimator } from './outcomes/experience.ts';
import { DEMO_HELP_FOLDER, seedDemoArticles } from './demo/knowledge.ts';
import { createInboxLive, inboxLivePlugin, inboxObserver, registerInbox } from './inbox/index.ts';

export interface WiredComponents {
  /** This node's SDK connections (the gateway, /ready, diagnostics). */
  hub: ReturnType<typeof createSdkHub>;
  /** Every node's SDK functions and `onSend` handlers: what the features call (issue 17, part 4). */
  clusterHub: ClusterHub;
  webhooks: ReturnType<typeof createWebhooks>;
  /** The MCP servers of `tools.mcp` (their tools join the SDK's in the catalogue the model sees). */
  mcp: McpManager;
  host: ConversationHost;
  /**
   * This node's lease in the cluster (joined by `Parley.start`, left at the end of `stop`). `onLost` is where the
   * conversation host must stop every actor once ownership is fenced (issue 17, part 2); today a loss is logged, takes
   * the node out of `/ready` until it has joined again under a new id, and nothing else.
   */
  cluster: ClusterMembership;
  whatsapp: WhatsAppChannel;
  /** Loud LLM failures (401/403/404): `/ready`'s `checks.llm`. */
  llmFailures: LlmFailureWatch;
  /** The knowledge base (issue 36): articles, search (the `KnowledgeSearch` port), sync. */
  knowledge: Knowledge;
  liveActors: () => LiveActor[];
  diagnostics: () => Promise<Record<string, unknown>>;
  afterListen: ((url: string) => Promise<void>)[];
}

const PASSIVATION_TICK_MS = 30_000;

export async function wireComponents(o: {
  app: FastifyInstance;
  services: Services;
  onShutdown: (fn: () => Promise<void> | void) => void;
}): Promise<WiredComponents> {
  const { app, services, onShutdown } = o;
  const { config, clock, logger, telemetry, store } = services;

  const customers = createCustomerRepo(store, clock);
  // Several nodes share a PostgreSQL store; LMDB is one process, the only node (nothing to claim, relay or take over).
  const clustered = store.engine === 'postgres';

  let host: ConversationHost | undefined;
  const supervisor = createSupervisorRuntime({
    clock,
    logger,
    telemetry,
    maxSdkConnections: 32,
    idleMs: config.session.idle_minutes * 60_000,
    // The supervisor decides when; the host knows each conversation's last activity.
    passivate: (idleBefore) => host?.passivate(host.idleSince(idleBefore)),
  });
  const localHub = createSdkHub({ services, supervisor });
  // The features below reach SDK connections on every node; membership is created further down, read at each use.
  const hub = createClusterHub({
    local: localHub,
    bus: store.bus,
    membership: () => cluster,
    clock: createClock(),
    logger,
    invokeTimeoutMs: config.safety.invoke_timeout_ms,
  });

  const llmFailures = createLlmFailureWatch({ logger, telemetry, clock, scrub: createScrubber(configuredSecrets(config, services.secret)).text });
  const llm = createLlmFromConfig(config.llm, {
    now: clock.now,
    sleep: (ms) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms)),
    onAttemptFailed: llmFailures.failed,
    onAttemptSucceeded: llmFailures.succeeded,
  });
  // `cluster` is created below; the relay asks it only when a frame is pushed.
  const webRelay = createWebRelay({
    bus: store.bus,
    nodeId: () => cluster.nodeId(),
    othersAlive: () => clustered && cluster.peersAlive(),
    logger,
  });
  const sessions = createWebSessions(clock.now, webRelay.relay);
  const stopWebRelay = clustered ? webRelay.listen((customerId, frame) => sessions.pushFromPeer(customerId, frame)) : undefined;
  const outbox = createOutbox(clock);
  // What a customer waiting for a person is told (issue 35): business hours, the usual wait, the offline notice.
  const outlook = createHandoffOutlook({ config: config.handoff, clock, telemetry: store.telemetry, logger });
  const noticeDeps = { outlook, store, now: clock.now, logger };
  const whatsapp = createWhatsAppChannel({ services, customers, hub, host: () => host!, outbox, outlook, rate: (id, rating) => outcomes.rate(id, rating) });
  const sinks: Partial<Record<'web' | 'whatsapp', ChannelSink>> = { web: withHandoffNotices(sessions, noticeDeps), whatsapp: whatsapp.sink };

  const webhooks = createWebhooks(services);
  const emitWebhook = (e: NewWebhookEvent | undefined) => {
    if (e) void webhooks.emit(e).catch((err) => logger.error({ err, type: e.type }, 'webhook event could not be stored'));
  };
  const stopWebhookFeed = config.webhooks.endpoints.length ? telemetry.subscribe({ event: (e) => emitWebhook(telemetryEvent(e)) }) : undefined;

  const cluster = createClusterMembership({
    nodes: store.nodes,
    ownership: store.ownership,
    // Real time, not the services' clock: a lease is the database's real time, and a test clock (moved by an offset,
    // or a manual one that only moves when told) must neither end it nor hold its heartbeat back.
    clock: createClock(),
    logger,
    nodeId: config.cluster.node_id,
    leaseSeconds: config.cluster.lease_seconds,
    load: () => ({ sdkConnections: localHub.connectionCount(), sdkFunctions: localHub.catalog().length, conversations: host?.activeCount() ?? 0 }),
  });
  // Job notices are for the other nodes; a node that died may have committed jobs it had not announced yet
  // (PostgreSQL announces after commit, and not while it sees no other node): look again.
  store.setJobNoticeAudience(() => cluster.peersAlive());
  cluster.onPeersGone(() => store.rescanJobs());
  // Recorded for the dashboard and counted by /metrics (parley_cluster_nodes_lost_total, the "node lost" alert).
  cluster.onPeersGone((nodes) => telemetry.event({ type: 'cluster.peers_gone', data: { nodes } }));
  cluster.onLost((loss) => telemetry.event({ type: 'cluster.lease_lost', data: { nodeId: loss.nodeId, reason: loss.reason } }));
  // Registered first, so it runs last: the node leaves once its conversations have drained.
  onShutdown(() => cluster.stop());
  // Then its SDK catalog is withdrawn from the other nodes.
  onShutdown(() => hub.stop());

  // The tools the model sees and calls: every node's SDK functions and the MCP servers' tools (one seam).
  const mcp = createMcpManager({ servers: config.tools.mcp, clock, logger, version: services.version });
  // The knowledge base's `search_knowledge` (issue 36): offered once it has articles (read now, before any turn).
  const knowledge = createKnowledgeFeature(services);
  if (config.demo.knowledge) await seedDemoArticles(knowledge.knowledge, join(PROJECT_ROOT, DEMO_HELP_FOLDER), logger);
  await knowledge.tool.refresh();
  const tools = withToolSources(hub, [mcp, knowledge.tool]);
  onShutdown(() => mcp.stop());
  const outcomes = createOutcomeTracker({
    services,
    webhooks: config.webhooks.endpoints.length ? (tx, events) => webhooks.prepare(tx, events) : undefined,
    // CSAT (`outcomes.csat`): open widgets are asked at once (a closed one on its next `ready`), WhatsApp with buttons.
    onDecided: (r) => {
      if (config.outcomes.estimate_experience) void estimateExperience(r);
      if (!config.outcomes.csat) return;
      if (r.channel === 'web') sessions.push(r.customerId, { type: 'rate' });
      else void whatsapp.askRating(r).catch((err) => logger.warn({ err }, 'WhatsApp rating request not sent'));
    },
  });
  const estimateExperience = createExperienceEstimator({ services, llm, tracker: outcomes });
  // The agent inbox's live feed: told of handoffs, customer messages and agent replies by an observer of the host.
  const inboxLive = createInboxLive({ bus: store.bus, clock: createClock(), logger });
  const llmStep = createLlmStep({ services, llm, hub: tools, history: store.history });
  host = createConversationHost({
    services,
    llmStep,
    invokeTool: createToolInvoker({ tools, customers: store.customers, config }),
    sinks,
    sdk: { registered: () => hub.registeredCount() > 0, onChange: (listener) => hub.onChange(listener) },
    // Several nodes share a PostgreSQL store: claims, fencing and inboxes. On LMDB one process holds the store and
    // owns every conversation, so nothing is claimed or checked.
    cluster: clustered
      ? {
          ownership: createConversationOwnership({ ownership: store.ownership, nodeId: () => cluster.nodeId() }),
          notifyOwner: (nodeId, conversationId) => notifyInbox(store.bus, nodeId, conversationId),
          holdsLease: () => cluster.holdsLease(),
        }
      : undefined,
    recorders: config.webhooks.endpoints.length
      ? [
          (tx, meta, written) =>
            webhooks.prepare(
              tx,
              written.map((entry) => conversationEvent(meta, entry)).filter((e) => e !== undefined),
            ),
        ]
      : [],
    observers: [
      // Every conversation's outcome (docs/outcomes.md), folded in once the messages that decide it are durable.
      outcomes.observe,
      (meta, entry) => {
        const notice = handoffNotice(meta, entry);
        if (notice) hub.broadcast(notice);
      },
      inboxObserver(inboxLive),
    ],
    // Lifecycle only: per-message activity times stay in the host (the supervisor machine
    // would copy its context per message).
    lifecycle: {
      activated: (meta, actor) => supervisor.conversationActivated(meta.conversationId, actor),
      passivated: (id) => {
        llmStep.forget(id);
        supervisor.conversationPassivated(id);
      },
    },
  });

  // This node's conversations: wake-ups for their inboxes, takeover of those whose node is gone, and a stop of every
  // actor when the lease is lost (another node may be claiming them already).
  const takeover = createTakeover({
    ownership: store.ownership,
    inbox: store.inbox,
    bus: store.bus,
    host,
    status: () => cluster.status(),
    nodeId: () => cluster.nodeId(),
    clock: createClock(),
    now: () => clock.now(),
    logger,
    everyMs: Math.max(200, Math.round((config.cluster.lease_seconds * 1000) / 5)),
  });
  const stopInboxWatch = clustered
    ? watchInbox(
        store.bus,
        () => cluster.nodeId(),
        (id) => void host!.drainInbox(id).catch(() => undefined),
      )
    : undefined;
  // On LMDB this process is the only node, so nobody else can take its conversations over: a lease lost to a stalled
  // event loop must not stop them (and no sweep would start them again).
  if (clustered) cluster.onLost(() => host!.relinquishAll());
  // A node that joins says so, and the others read the cluster at once: they relay widget frames to it from then on.
  const stopHellos = clustered ? store.bus.subscribe('hello', () => void cluster.refreshView()) : undefined;
  const sayHello = () => (clustered ? store.bus.publish('hello', cluster.nodeId()).catch(() => undefined) : Promise.resolve());
  cluster.onJoined(() => void sayHello());

  const identity = createIdentity(services);

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

  const daemon = config.daemon.enabled
    ? createActor(
        daemonMachine.provide({
          actors: { runCycle: fromPromise(createReflectionCycle({ services, llm, sendFollowup: (req) => proactive.send(req) })) },
        }),
        { input: { intervalMs: config.daemon.interval_seconds * 1000 }, clock: xstateClock(clock) },
      )
    : undefined;

  // The WebSocket routes in their own scope: only they pay for @fastify/websocket's per-request hooks.
  const agents = createAgents(services);
  const upgrades = routeUpgrades(app.server, ['/sdk', '/widget/ws', '/api/v1/inbox/live']);
  await app.register(async (scope) => {
    await registerWebSocketSupport(scope, upgrades, services.logger.child({ component: 'websocket' }));
    await scope.register(sdkGatewayPlugin, { services, hub: localHub, supervisor });
    const signIn = createWidgetSignIn({
      services,
      customers,
      sessionTokens: identity.tokens,
      identityTokens: identity.identityTokens,
      visitorTokens: identity.visitorTokens,
      visitors: createVisitors({ store, customers }),
    });
    const handoffNotice = (handoff: HandoffInfo | undefined, customerId: string) => readyNotice(noticeDeps, handoff, customerId);
    await scope.register(widgetGatewayPlugin, {
      services,
      history: store.history,
      host,
      sessions,
      signIn,
      customers: store,
      handoffNotice,
      feedback: widgetFeedback(services, outcomes),
    });
    await scope.register(inboxLivePlugin, { sessions: agents.sessions, live: inboxLive });
  });
  await app.register(identityPlugin, { services, customers, tokens: identity.tokens, links: identity.links, limits: createAuthLimits(services) });
  await app.register(proactivePlugin, { services, proactive });
  await app.register(customersPlugin, { services, customers, normalizePhone });
  await app.register(agents.plugin, agents.routes);
  await app.register(conversationsPlugin, { services, host, customers, auth: agents.principalHook });
  await registerInbox(app, { services, host, customers, agents, live: inboxLive, pushToWidget: (id, frame) => void sessions.push(id, frame) });
  const metrics = createMetrics(telemetry, {
    activeConversations: () => host!.activeCount(),
    sdkConnections: () => hub.connectionCount(),
    whatsappQueueDepth: () => ({ inbound: whatsapp.inbound.depth(), outbound: whatsapp.outboundQueue.depth() }),
    withHuman: () => host!.list().filter((c) => c.state === 'withHuman').length,
    handoffs: () =>
      host!.list().flatMap((c) => (c.human ? [{ since: c.human.since, answered: c.human.agent !== undefined, agentId: c.human.agent?.agentId }] : [])),
    webhooks: () => webhooks.counters(),
    storeDatabase: () => store.checks().database,
    clusterNodes: () => cluster.view().nodes.length,
    now: () => clock.now(),
  });
  const retention = createRetentionPruner({ store, clock, retentionDays: config.telemetry.retention_days, logger });
  await app.register(telemetryPlugin, {
    services,
    customers,
    metricsText: () => metrics.text(),
    auth: agents.principalHook,
    articleTitle: async (id) => (await knowledge.knowledge.get(id))?.title,
  });
  // The dashboard's "Export as test": a conversation as a scenario file (README, "Testing your conversations").
  await app.register(scenarioExportPlugin, { services, auth: agents.principalHook });
  await app.register(outcomesPlugin, { services, customers, tracker: outcomes, auth: agents.principalHook });
  await app.register(whatsapp.plugin);
  await app.register(webhooksPlugin, { services, webhooks, auth: agents.principalHook });
  await knowledge.register(app);
  const wa = config.channels.whatsapp;
  if (wa.enabled && wa.provider === 'meta') {
    // Like the sender: test mode never reaches Meta; only a graph_url pointed elsewhere (a local fake) is called.
    const reachable = wa.phone_id && wa.token && !(services.testMode && wa.graph_url === DEFAULT_GRAPH_URL);
    const graph = reachable ? { graphUrl: wa.graph_url, phoneId: wa.phone_id, token: wa.token, timeoutMs: wa.send_timeout_ms } : undefined;
    await app.register(whatsappMediaPlugin, { services, graph });
  }
  if (services.testMode) await app.register(whatsappTestPlugin, { outbox });
  if (config.demo.backend) await app.register(demoPlugin, { services, customers, tokens: identity.tokens });

  let tick: ReturnType<typeof clock.setTimeout> | undefined;
  let ticks = 0;
  const scheduleTick = () => {
    tick = clock.setTimeout(() => {
      supervisor.tick();
      void ledger.prune().catch((err) => logger.warn({ err }, 'proactive prune failed'));
      void identity.links.prune().catch((err) => logger.warn({ err }, 'magic-link prune failed'));
      // A day late: a link opened just after it expired is still told "expired", not "unknown".
      if (ticks % 60 === 0) void store.agents.pruneCredentials(clock.now() - 86_400_000).catch((err) => logger.warn({ err }, 'agent credential prune failed'));
      if (++ticks % 120 === 0) void whatsapp.prune().catch((err) => logger.warn({ err }, 'webhook de-dup prune failed'));
      scheduleTick();
    }, PASSIVATION_TICK_MS);
  };

  const afterListen: WiredComponents['afterListen'] = [
    async () => {
      mcp.start(); // in the background: a server that is slow or down never holds the start back
      hub.start();
      inboxLive.start();
      await sayHello();
      await host!.resumeBusy();
      if (clustered) takeover.start();
      await whatsapp.start();
      await webhooks.start();
      retention.start();
      await outcomes.start();
      knowledge.sync.start();
      scheduleTick();
      if (daemon) {
        daemon.start();
        supervisor.register('daemon', 'daemon', daemon);
      }
    },
  ];
  if (config.demo.backend) {
    afterListen.push(async (url) => {
      const { startDemoBackend } = await import('../examples/demo-backend/backend.ts');
      const backend = await startDemoBackend({ url, secret: services.secret, logger: logger.child({ component: 'demo-backend' }) });
      onShutdown(() => backend.close());
    });
  }

  // Runs after the conversations below have drained (registered first, run later): their last outputs are folded in.
  onShutdown(() => outcomes.stop());
  // Runs after the HTTP server closed: drain the conversations, then stop the actors.
  onShutdown(async () => {
    clock.clearTimeout(tick);
    stopInboxWatch?.();
    stopWebRelay?.();
    stopHellos?.();
    await takeover.stop();
    await host!.stop();
    supervisor.stop();
  });
  onShutdown(() => whatsapp.stop());
  onShutdown(async () => {
    stopWebhookFeed?.();
    await webhooks.stop();
  });
  onShutdown(() => {
    retention.stop();
    metrics.close();
  });
  onShutdown(() => {
    daemon?.stop();
  });
  onShutdown(() => knowledge.sync.stop());
  onShutdown(() => inboxLive.stop());

  return {
    hub: localHub,
    clusterHub: hub,
    webhooks,
    mcp,
    host,
    cluster,
    whatsapp,
    llmFailures,
    knowledge: knowledge.knowledge,
    liveActors: () => supervisor.liveActors(),
    diagnostics: async () => ({
      conversations: { active: host!.activeCount(), list: host!.list().slice(0, 200) },
      web: { openWidgets: sessions.count() },
      whatsapp: await whatsapp.diagnostics(),
      webhooks: webhooks.counters(),
      mcp: { servers: mcp.report(), tools: mcp.catalog().map((f) => ({ name: f.name, mode: f.mode, server: f.connectionId })) },
      daemon: daemon ? { state: daemon.getSnapshot().value, ...daemon.getSnapshot().context } : { enabled: false },
    }),
    afterListen,
  };
}
