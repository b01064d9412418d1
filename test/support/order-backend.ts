// The integrator's backend in the cluster tests: an SDK on each given node exposing one order function, and a model
// that calls that function once and then answers with a fixed text.
import { z } from 'zod';
import { createClient, type ParleyClient } from '../../sdk/src/index.ts';
import type { ScriptStep } from './fake-openai.ts';
import { TEST_SECRET } from './parley.ts';

export type OrderHandler = (args: { orderId: string }, ctx: { invocationId: string }) => Promise<unknown>;

/** One SDK client per URL, each exposing `name` (`mode: 'write'` asks the customer first); resolves with the closer. */
export async function orderBackend(urls: string[], name: string, o: { mode?: 'write'; handler: OrderHandler }): Promise<() => Promise<void>> {
  const clients: ParleyClient[] = [];
  for (const url of urls) {
    const sdk = createClient({ backoff: { initialMs: 100, maxMs: 400 } });
    sdk.expose(name, { description: `${name} for an order`, parameters: z.object({ orderId: z.string() }), ...(o.mode ? { mode: o.mode } : {}) }, o.handler);
    await sdk.listen({ url, secret: TEST_SECRET });
    clients.push(sdk);
  }
  return async () => {
    for (const sdk of clients) await sdk.close();
  };
}

/** A model that calls `name` with `args` until a tool result is in the conversation, then answers `text`. */
export const callThenAnswer =
  (name: string, args: unknown, text: string): ScriptStep =>
  (body: { messages: { role: string }[] }) =>
    body.messages.some((m) => m.role === 'tool') ? { text } : { toolCalls: [{ name, args }] };
