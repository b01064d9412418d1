// The demo backend: what an integrator writes. It dials out to Parley with
// the real SDK and exposes two functions over an in-memory order book.
// Started in-process by the default profile (`demo.backend: true`); run it on
// its own with `npx tsx examples/demo-backend/main.ts`.
import { z } from 'zod';
import { createClient, withReceipt } from '../../sdk/src/index.ts';

interface Order {
  orderId: string;
  status: 'processing' | 'shipped' | 'delivered' | 'cancelled';
  items: string;
  eta?: string;
}

export function demoOrders(): Map<string, Order> {
  return new Map<string, Order>([
    ['1001', { orderId: '1001', status: 'processing', items: '2 × coffee beans', eta: '2026-11-27' }],
    ['1002', { orderId: '1002', status: 'shipped', items: '1 × grinder', eta: '2026-11-24' }],
    ['1003', { orderId: '1003', status: 'delivered', items: '1 × kettle' }],
  ]);
}

/**
 * Faults for Parley's own scenario tests (examples/scenarios): `cancel-noop` answers a cancel without cancelling,
 * `rename-status` exposes getOrderStatus as lookupOrder.
 */
export type DemoFault = 'cancel-noop' | 'rename-status';

export async function startDemoBackend(o: {
  url: string;
  secret: string;
  logger?: { info(...a: unknown[]): void; warn(...a: unknown[]): void };
  faults?: DemoFault[];
  /** Expose `orderStateForTests` (the order book as it is), for scenarios' backend checks. */
  testFunctions?: boolean;
}) {
  const faults = new Set(o.faults ?? []);
  const orders = demoOrders();
  const appliedCancellations = new Set<string>();
  const client = createClient();

  client.expose(
    faults.has('rename-status') ? 'lookupOrder' : 'getOrderStatus',
    {
      description: 'Get the status of an order by its order number',
      parameters: z.object({ orderId: z.string().describe('The order number, e.g. 1001') }),
      mode: 'read',
    },
    async ({ orderId }: { orderId: string }) => {
      const order = orders.get(String(orderId));
      if (!order) throw Object.assign(new Error(`No order ${orderId}`), { code: 'not_found' });
      return { ...order };
    },
  );

  client.expose(
    'cancelOrder',
    {
      description: 'Cancel an order by its order number',
      parameters: z.object({ orderId: z.string().describe('The order number, e.g. 1001') }),
      mode: 'write',
      // The confirmation card in the customer's language (Parley fills {orderId} from the arguments).
      summary: {
        en: 'Cancel order {orderId}',
        es: 'Cancelar el pedido {orderId}',
        de: 'Bestellung {orderId} stornieren',
        fr: 'Annuler la commande {orderId}',
      },
    },
    async ({ orderId }: { orderId: string }, context: { invocationId: string }) => {
      const order = orders.get(String(orderId));
      if (!order) throw Object.assign(new Error(`No order ${orderId}`), { code: 'not_found' });
      // The invocationId is stable across retries: apply the write once.
      if (appliedCancellations.has(context.invocationId)) return { orderId: order.orderId, status: order.status };
      if (order.status === 'shipped' || order.status === 'delivered') {
        const shipped = order.status === 'shipped';
        // The receipt the customer reads where they approved (the message is for the model).
        const receipt = {
          en: `Could not cancel order ${orderId}: it has already ${shipped ? 'shipped' : 'been delivered'}`,
          es: `No se pudo cancelar el pedido ${orderId}: ya ${shipped ? 'se envió' : 'se entregó'}`,
        };
        throw Object.assign(new Error(`Order ${orderId} has already ${shipped ? 'shipped' : 'been delivered'} and can no longer be cancelled`), {
          code: 'not_cancellable',
          receipt,
        });
      }
      if (!faults.has('cancel-noop')) order.status = 'cancelled';
      appliedCancellations.add(context.invocationId);
      const result = { orderId: order.orderId, status: faults.has('cancel-noop') ? 'cancelled' : order.status };
      return withReceipt(result, {
        en: `Order ${orderId} cancelled`,
        es: `Pedido ${orderId} cancelado`,
        de: `Bestellung ${orderId} storniert`,
        fr: `Commande ${orderId} annulée`,
      });
    },
  );

  if (o.testFunctions) {
    client.expose(
      'orderStateForTests',
      { description: 'Test only: the stored state of an order', parameters: z.object({ orderId: z.string() }), mode: 'read' },
      async ({ orderId }: { orderId: string }) => ({ ...(orders.get(String(orderId)) ?? { orderId, status: 'unknown' }) }),
    );
  }

  await client.listen({ url: o.url, secret: o.secret });
  o.logger?.info({ functions: ['getOrderStatus', 'cancelOrder'] }, 'demo backend connected');
  return { client, orders, close: () => client.close() };
}
