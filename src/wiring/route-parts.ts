// The parts that only serve routes (no start, no stop): where they register among the others changes nothing.
import type { FastifyInstance } from 'fastify';
import type { HandoffInfo } from '../store/model.ts';
import type { Services } from '../services.ts';
import { widgetGatewayPlugin } from '../web/gateway.ts';
import { readyNotice } from '../handoff/web-notices.ts';
import { sdkGatewayPlugin } from '../sdk/gateway.ts';
import { identityPlugin } from '../identity/routes.ts';
import { createAuthLimits } from '../identity/limits.ts';
import { createWidgetSignIn } from '../identity/widget-sign-in.ts';
import { createVisitors } from '../identity/visitors.ts';
import { demoPlugin } from '../demo/routes.ts';
import { proactivePlugin } from '../proactive/routes.ts';
import { customersPlugin } from '../customers/routes.ts';
import { normalizePhone } from '../whatsapp/phone.ts';
import { whatsappTestPlugin } from '../ops/test-mode.ts';
import { registerWebSocketSupport, routeUpgrades } from '../http/websocket-scope.ts';
import { widgetFeedback } from '../outcomes/feedback.ts';
import { inboxLivePlugin } from '../inbox/index.ts';
import type { Parts as Made } from './parts.ts';

/** The WebSocket routes in their own scope: only they pay for @fastify/websocket's per-request hooks. */
async function registerWebSockets(app: FastifyInstance, services: Services, made: Made) {
  const { store } = services;
  const { customers, sessions, noticeDeps } = made.channels;
  const { identity, agents } = made.features;
  const upgrades = routeUpgrades(app.server, ['/sdk', '/widget/ws', '/api/v1/inbox/live']);
  await app.register(async (scope) => {
    await registerWebSocketSupport(scope, upgrades, services.logger.child({ component: 'websocket' }));
    await scope.register(sdkGatewayPlugin, { services, hub: made.cluster.localHub, supervisor: made.cluster.supervisor });
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
      host: made.conversations.host,
      sessions,
      signIn,
      customers: store,
      handoffNotice,
      feedback: widgetFeedback(services, made.tooling.outcomes),
    });
    await scope.register(inboxLivePlugin, { sessions: agents.sessions, live: made.tooling.inboxLive });
  });
}

export async function registerRouteParts(app: FastifyInstance, services: Services, made: Made) {
  const { customers, outbox } = made.channels;
  const { identity, agents, proactive } = made.features;
  await registerWebSockets(app, services, made);
  await app.register(identityPlugin, { services, customers, tokens: identity.tokens, links: identity.links, limits: createAuthLimits(services) });
  await app.register(proactivePlugin, { services, proactive });
  await app.register(customersPlugin, { services, customers, normalizePhone });
  await app.register(agents.plugin, agents.routes);
  if (services.testMode) await app.register(whatsappTestPlugin, { outbox });
  if (services.config.demo.backend) await app.register(demoPlugin, { services, customers, tokens: identity.tokens });
}
