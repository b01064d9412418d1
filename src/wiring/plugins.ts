// The parts of Parley as fastify plugins, each with its routes and its own lifecycle hooks (issue 31, part 5).
// `registerParts` registers them in the order they start; fastify stops them in the reverse (`lifecycle.ts`). So:
//   cluster first: the node joins before it takes traffic (onReady) and leaves last, once its conversations have
//     drained and its SDK catalogue is withdrawn (no other node takes a conversation over while it is still writing);
//   sdk, mcp: the tools every turn may call, up before conversations resume and down after they drained;
//   outcomes, inbox: the outcome is folded into the conversations' writes (its timer re-armed by the drain's last
//     ones) and the inbox observes them, so both stop after the drain;
//   conversations: resume the busy ones and take over orphans; on stop, drain every actor, then stop the supervisor;
//   whatsapp, webhooks, telemetry, daemon, knowledge, maintenance: start once conversations run, stop before the drain
//     (the WhatsApp workers stop taking new messages before the host drains);
//   the demo backend last: it connects to this server as an SDK backend.
// Route-only parts (no hooks) register in between; their place changes nothing.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { outcomesPlugin } from '../outcomes/routes.ts';
import { registerInbox } from '../inbox/index.ts';
import { conversationsPlugin } from '../conversations/routes.ts';
import { whatsappMediaPlugin } from '../whatsapp/media.ts';
import { DEFAULT_GRAPH_URL } from '../config/schema.ts';
import { webhooksPlugin } from '../webhooks/routes.ts';
import { telemetryPlugin } from '../telemetry/routes.ts';
import { scenarioExportPlugin } from '../ops/scenario-export.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { Parts as Made } from './parts.ts';
import { registerRouteParts } from './route-parts.ts';

const PASSIVATION_TICK_MS = 30_000;

/** The parts that start and stop around the conversations, in their order. */
async function registerCore(app: FastifyInstance, services: Services, made: Made, lc: Lifecycle) {
  const { membership, hub, supervisor } = made.cluster;
  const { customers, sessions, stopWebRelay } = made.channels;
  const { mcp, outcomes, inboxLive } = made.tooling;
  const { host, takeover, stopInboxWatch, stopHellos, sayHello } = made.conversations;
  const { agents } = made.features;
  const clustered = services.store.capabilities.clustered;
  await app.register(lc.part('cluster', { ready: () => membership.start(), close: () => membership.stop() }));
  // Its SDK catalogue is withdrawn from the other nodes before the node leaves.
  await app.register(lc.part('sdk', { listen: () => hub.start(), close: () => hub.stop() }));
  // In the background: a server that is slow or down never holds the start back.
  await app.register(lc.part('mcp', { listen: () => mcp.start(), close: () => mcp.stop() }));
  await app.register(
    lc.part('outcomes', { listen: () => outcomes.start(), close: () => outcomes.stop() }, (scope) =>
      scope.register(outcomesPlugin, { services, customers, tracker: outcomes, auth: agents.principalHook }),
    ),
  );
  await app.register(
    lc.part('inbox', { listen: () => inboxLive.start(), close: () => inboxLive.stop() }, (scope) =>
      registerInbox(scope, { services, host, customers, agents, live: inboxLive, pushToWidget: (id, frame) => void sessions.push(id, frame) }),
    ),
  );
  // The node says hello once the SDK catalogue and the inbox feed run, as its conversations resume: the others read the
  // cluster at once and relay widget frames to it from then on.
  const resume = async () => {
    await sayHello();
    await host.resumeBusy();
    if (clustered) takeover.start();
  };
  // The server is closed (its sockets too): drain the conversations, then stop the actors.
  const drain = async () => {
    stopInboxWatch?.();
    stopWebRelay?.();
    stopHellos?.();
    await takeover.stop();
    await host.stop();
    supervisor.stop();
  };
  await app.register(
    lc.part('conversations', { listen: resume, close: drain }, (scope) =>
      scope.register(conversationsPlugin, { services, host, customers, auth: agents.principalHook }),
    ),
  );
}

/** The parts that start once the conversations run and stop before they drain, in their order. */
async function registerAround(app: FastifyInstance, services: Services, made: Made, lc: Lifecycle) {
  const { clock, logger, store } = services;
  const { whatsapp, webhooks, stopWebhookFeed, customers } = made.channels;
  const { knowledge } = made.tooling;
  const { supervisor } = made.cluster;
  const { agents, retention, metrics, daemon, ledger, identity } = made.features;
  await app.register(lc.part('whatsapp', { listen: () => whatsapp.start(), close: () => whatsapp.stop() }, (scope) => registerWhatsApp(scope, services, made)));
  const stopWebhooks = async () => {
    stopWebhookFeed?.();
    await webhooks.stop();
  };
  await app.register(
    lc.part('webhooks', { listen: () => webhooks.start(), close: stopWebhooks }, (scope) =>
      scope.register(webhooksPlugin, { services, webhooks, auth: agents.principalHook }),
    ),
  );
  const stopTelemetry = () => {
    retention.stop();
    metrics.close();
  };
  await app.register(
    lc.part('telemetry', { listen: () => retention.start(), close: stopTelemetry }, async (scope) => {
      await scope.register(telemetryPlugin, {
        services,
        customers,
        metricsText: () => metrics.text(),
        auth: agents.principalHook,
        articleTitle: async (id) => (await knowledge.knowledge.get(id))?.title,
      });
      // The dashboard's "Export as test": a conversation as a scenario file (README, "Testing your conversations").
      await scope.register(scenarioExportPlugin, { services, auth: agents.principalHook });
    }),
  );
  if (daemon) {
    const startDaemon = () => {
      daemon.start();
      supervisor.register('daemon', 'daemon', daemon);
    };
    await app.register(lc.part('daemon', { listen: startDaemon, close: () => void daemon.stop() }));
  }
  await app.register(lc.part('knowledge', { listen: () => knowledge.sync.start(), close: () => knowledge.sync.stop() }, (scope) => knowledge.register(scope)));
  // Every 30 s: passivation of idle conversations, and the prunes of short-lived records.
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
  await app.register(lc.part('maintenance', { listen: scheduleTick, close: () => clock.clearTimeout(tick) }));
}

async function registerWhatsApp(scope: FastifyInstance, services: Services, made: Made) {
  await scope.register(made.channels.whatsapp.plugin);
  const wa = services.config.channels.whatsapp;
  if (wa.enabled && wa.provider === 'meta') {
    // Like the sender: test mode never reaches Meta; only a graph_url pointed elsewhere (a local fake) is called.
    const reachable = wa.phone_id && wa.token && !(services.testMode && wa.graph_url === DEFAULT_GRAPH_URL);
    const graph = reachable ? { graphUrl: wa.graph_url, phoneId: wa.phone_id, token: wa.token, timeoutMs: wa.send_timeout_ms } : undefined;
    await scope.register(whatsappMediaPlugin, { services, graph });
  }
}

/** Every part, in the order they start (and the reverse of the order they stop). */
export async function registerParts(app: FastifyInstance, services: Services, made: Made, lc: Lifecycle, url: () => string) {
  await registerCore(app, services, made, lc);
  await registerAround(app, services, made, lc);
  await registerRouteParts(app, services, made);
  if (services.config.demo.backend) {
    let backend: { close(): Promise<void> } | undefined;
    const startBackend = async () => {
      const { startDemoBackend } = await import('../../examples/demo-backend/backend.ts');
      backend = await startDemoBackend({ url: url(), secret: services.secret, logger: services.logger.child({ component: 'demo-backend' }) });
    };
    await app.register(lc.part('demo-backend', { listen: startBackend, close: () => backend?.close() }));
  }
}
