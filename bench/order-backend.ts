// The backend the turn benches connect: one SDK exposing getOrderStatus, the one call each benchmark turn makes.
import { z } from 'zod';
import { createClient, type ParleyClient } from '../sdk/src/index.ts';
import { TEST_SECRET } from '../test/support/parley.ts';

export async function orderStatusBackend(url: string): Promise<ParleyClient> {
  const sdk = createClient();
  sdk.expose(
    'getOrderStatus',
    { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
    async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }),
  );
  await sdk.listen({ url, secret: TEST_SECRET });
  return sdk;
}
