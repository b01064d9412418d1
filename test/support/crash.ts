// A Parley process killed in the middle of a turn and started again on the same store and port, for crash-recovery
// tests: the customer's message is acknowledged before the SIGKILL.
import { spawnParley, type ParleyProcess } from './parley.ts';
import { connectWidget, type WidgetClient } from './widget-client.ts';

type Config = Parameters<typeof spawnParley>[0]['config'];

/**
 * Starts Parley on `config` and a fresh store; the customer sends `text`; once it is acknowledged and `killWhen`
 * resolves, SIGKILL, then a second Parley on the same store and port. Both processes are handed to `cleanup`.
 */
export async function killAndRestart(o: {
  config: Config;
  storagePath: string;
  customer: { customerId: string; email: string };
  text: string;
  killWhen: (w: WidgetClient) => Promise<unknown>;
  cleanup: (c: () => unknown) => void;
}): Promise<{ first: ParleyProcess; second: ParleyProcess }> {
  const first = await spawnParley({ storagePath: o.storagePath, config: o.config });
  o.cleanup(() => first.kill());
  const w = await connectWidget(first.url);
  w.send({ type: 'init', ...o.customer });
  await w.next((f) => f.type === 'ready');
  w.send({ type: 'message', id: 'm1', text: o.text });
  await w.next((f) => f.type === 'ack' && f.id === 'm1');
  await o.killWhen(w);
  await first.kill('SIGKILL');
  w.close();
  const second = await spawnParley({ storagePath: o.storagePath, config: o.config, port: Number(new URL(first.url).port) });
  o.cleanup(() => second.kill());
  return { first, second };
}
