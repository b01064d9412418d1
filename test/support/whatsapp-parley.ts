// A Parley with the WhatsApp channel on, pointed at a local fake Graph API, and a backend SDK
// exposing the order functions — the common setup of the WhatsApp integration tests.
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { startFakeGraph, type FakeGraph } from './fake-graph.ts';
import type { Clock } from '../../src/clock.ts';
import { startParley, TEST_SECRET, type TestParley } from './parley.ts';
import { WA } from './whatsapp.ts';

export interface WhatsAppSetup {
  graph: FakeGraph;
  p: TestParley;
  /** Every SDK function call the backend received. */
  invoked: { name: string; args: unknown }[];
}

export async function whatsappParley(
  open: { close(): unknown }[],
  o: {
    graph?: FakeGraph;
    whatsapp?: Record<string, unknown>;
    backend?: boolean;
    statuses?: boolean;
    proactive?: boolean;
    handoff?: NonNullable<NonNullable<Parameters<typeof startParley>[0]>['config']>['handoff'];
    /** The injected clock (default: a real one). */
    clock?: Clock;
    /** WhatsApp's gathering window (`conversation.gather_ms.whatsapp`; Parley's default 1,500 ms when not given). */
    gatherMs?: number;
    /** Messages that arrive together answered by one turn (off in the shared test config: see support/parley.ts). */
    bursts?: boolean;
  } = {},
): Promise<WhatsAppSetup> {
  const graph = o.graph ?? (await startFakeGraph());
  if (!o.graph) open.push(graph);
  const p = await startParley({
    clock: o.clock,
    config: {
      proactive: { enabled: o.proactive ?? false },
      channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA, ...o.whatsapp } },
      handoff: o.handoff,
      conversation: Object.assign({ bursts: o.bursts ?? false }, o.gatherMs === undefined ? {} : { gather_ms: { web: 0, whatsapp: o.gatherMs } }),
    },
  });
  open.push(p);
  // Meta's status webhooks (sent, delivered, read) for every message Graph accepts.
  if (o.statuses) graph.sendStatusesTo(`${p.url()}/wa/webhook`, WA.app_secret);
  const invoked: WhatsAppSetup['invoked'] = [];
  if (o.backend !== false) {
    const sdk = createClient();
    sdk.expose(
      'getOrderStatus',
      { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
      async (args: { orderId: string }) => {
        invoked.push({ name: 'getOrderStatus', args });
        return { orderId: args.orderId, status: 'shipped' };
      },
    );
    sdk.expose(
      'cancelOrder',
      { description: 'Cancel an order', parameters: z.object({ orderId: z.string() }), mode: 'write' },
      async (args: { orderId: string }) => {
        invoked.push({ name: 'cancelOrder', args });
        return { orderId: args.orderId, status: 'cancelled' };
      },
    );
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
  }
  return { graph, p, invoked };
}

/** Telemetry events of one type, through the events API (after a flush). */
export async function telemetryEvents(p: TestParley, type: string) {
  await p.services.telemetry.flush();
  const r = await fetch(`${p.url()}/api/v1/telemetry/events?type=${encodeURIComponent(type)}&limit=1000`, {
    headers: { authorization: `Bearer ${TEST_SECRET}` },
  });
  return ((await r.json()) as { items: { type: string; customerId?: string; data: Record<string, unknown> }[] }).items;
}
