// Which sender the channel uses: the SDK's `onSend`, the Graph API, or (test mode) the mock that fills the outbox.
import { DEFAULT_GRAPH_URL } from '../config/schema.ts';
import type { SdkHub, Services } from '../services.ts';
import { createGraphClient } from './graph-client.ts';
import { createMockSender, type Outbox } from './mock-sender.ts';
import type { WhatsAppSender } from './outbound.ts';
import { createSdkSender } from './sdk-sender.ts';

export function createWhatsAppSender(deps: { services: Pick<Services, 'config' | 'testMode'>; hub: SdkHub; outbox: Outbox }): WhatsAppSender {
  const { services, hub, outbox } = deps;
  const wa = services.config.channels.whatsapp;
  if (wa.provider === 'sdk') return createSdkSender(hub, wa.send_timeout_ms);
  // Test mode never reaches Meta: only a graph_url pointed elsewhere (a local fake) is really called.
  if (services.testMode && (!wa.phone_id || !wa.token || wa.graph_url === DEFAULT_GRAPH_URL)) return createMockSender(outbox);
  const graph = createGraphClient({ graphUrl: wa.graph_url, phoneId: wa.phone_id, token: wa.token, timeoutMs: wa.send_timeout_ms });
  if (!services.testMode) return graph;
  // In test mode every delivered message is also visible in the outbox.
  return {
    name: graph.name,
    async send(m) {
      const r = await graph.send(m);
      if (r.ok) outbox.record(m, r.providerMessageId);
      return r;
    },
  };
}
