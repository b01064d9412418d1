// The agent inbox (issue 35, parts 2–4): its live feed (made before the conversation host, which tells it what
// happens through an output observer), its service and its routes. The page itself is a bundle (inbox/src/).
import type { FastifyInstance } from 'fastify';
import type { WidgetAgentTypingFrame } from '../../sdk/src/widget-protocol.ts';
import type { Agents } from '../agents/index.ts';
import type { ConversationHost, OutputObserver } from '../conversations/host.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import type { Services } from '../services.ts';
import type { InboxLive } from './live.ts';
import { inboxRoutesPlugin } from './routes.ts';
import { createInboxService } from './service.ts';
import type { ViewDeps } from './views.ts';

export { createInboxLive, type InboxLive } from './live.ts';
export { inboxLivePlugin } from './routes.ts';

/**
 * What the inbox hears of a conversation's durable outputs: a handoff and a release, a customer's message while a
 * person has the conversation (`forward`), an agent's message. Announced from the node that wrote it to every node.
 */
export function inboxObserver(live: InboxLive): OutputObserver {
  return (meta, { o, at }) => {
    if (o.type === 'forward') live.announce('customer', meta.conversationId, at);
    else if (o.type === 'agent')
      live.announce('agent', meta.conversationId, at, o.author.agentId ? { agentId: o.author.agentId, name: o.author.name } : undefined);
    else if (o.type === 'handoff' && o.phase === 'requested') live.announce('handoff', meta.conversationId, at);
    else if (o.type === 'handoff' && o.phase === 'released') live.announce('released', meta.conversationId, at);
  };
}

export async function registerInbox(
  app: FastifyInstance,
  o: {
    services: Services;
    host: ConversationHost;
    customers: CustomerRepo;
    agents: Agents;
    live: InboxLive;
    pushToWidget: (customerId: string, frame: WidgetAgentTypingFrame) => void;
  },
) {
  const { store, clock, config } = o.services;
  const views: ViewDeps = { store, customers: o.customers, slaMinutes: config.handoff.sla_minutes, textSearch: config.telemetry.store_text };
  const service = createInboxService(
    Object.assign({}, views, {
      clock,
      host: o.host,
      announce: (kind: Parameters<InboxLive['announce']>[0], conversationId: string, agent?: { agentId: string; name: string }) =>
        o.live.announce(kind, conversationId, clock.now(), agent),
      pushToWidget: o.pushToWidget,
    }),
  );
  await app.register(inboxRoutesPlugin, { store, clock, secret: () => o.services.secret, sessions: o.agents.sessions, service, views, live: o.live });
}
