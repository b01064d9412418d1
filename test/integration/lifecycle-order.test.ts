// The composition root's order (issue 31, part 5; src/README.md, "The composition root"): every part starts in the
// order it is registered and stops in the reverse. A real Parley on 127.0.0.1:0 with a conversation open: the node
// joins the cluster before it listens; on stop the server closes first, the conversations drain while the node is
// still a member, and it leaves the cluster last. Swapping two registrations changes the recorded order and fails here.
import { afterEach, describe, expect, it } from 'vitest';
import { createParley, type Parley } from '../../src/app.ts';
import { createClock } from '../../src/clock.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createLogger } from '../../src/logger.ts';
import type { LifecycleStep } from '../../src/wiring/index.ts';
import { cleanup, tempDir, testConfig } from '../support/parley.ts';
import { onTestEngine } from '../support/test-engine.ts';
import { connectWidget } from '../support/widget-client.ts';

interface Seen {
  step: string;
  /** The node's membership and the live conversations when the step began. */
  cluster: string;
  active: number;
  listening: boolean;
}

const START = [
  'ready:cluster',
  'listen:sdk',
  'listen:mcp',
  'listen:outcomes',
  'listen:inbox',
  'listen:conversations',
  'listen:whatsapp',
  'listen:webhooks',
  'listen:telemetry',
  'listen:daemon',
  'listen:knowledge',
  'listen:maintenance',
];
const STOP = [
  'close:maintenance',
  'close:knowledge',
  'close:daemon',
  'close:telemetry',
  'close:webhooks',
  'close:whatsapp',
  'close:conversations',
  'close:inbox',
  'close:outcomes',
  'close:mcp',
  'close:sdk',
  'close:cluster',
];

describe('start and stop order', () => {
  let parley: Parley | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await parley?.stop();
    for (const d of dirs.splice(0)) cleanup(d);
  });

  it('joins before it listens, drains the conversations while a member, and leaves the cluster last', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const config = ConfigSchema.parse(await onTestEngine(testConfig({ daemon: { enabled: true } }, dir), dir));
    const seen: Seen[] = [];
    const record = (s: LifecycleStep) => {
      const runtime = parley?.runtime;
      seen.push({
        step: `${s.phase}:${s.part}`,
        cluster: runtime ? runtime.cluster.status() : 'not made',
        active: runtime ? runtime.host.activeCount() : 0,
        listening: parley?.app.server.listening ?? false,
      });
    };
    parley = await createParley({ config, testMode: true, clock: createClock(), logger: createLogger('warn'), onLifecycleStep: record });
    expect(seen).toEqual([]); // made, nothing started
    // The join (onReady) may wait a whole lease for its id; fastify's 10 s hook timeout must not cut it short.
    expect(parley.app.initialConfig.pluginTimeout).toBe(0);
    const url = await parley.start();

    expect(seen.map((s) => s.step)).toEqual(START);
    expect(seen[0]).toMatchObject({ step: 'ready:cluster', listening: false });
    expect(seen.slice(1).every((s) => s.listening && s.cluster === 'member')).toBe(true);

    // A conversation in memory, for the drain to stop.
    const w = await connectWidget(url);
    w.send({ type: 'init', customerId: 'order-1', email: 'order-1@example.com' });
    await w.next((f) => f.type === 'ready');
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', 30_000);
    expect(parley.runtime.host.activeCount()).toBeGreaterThan(0);

    seen.length = 0;
    await parley.stop();
    const closing = seen.filter((s) => s.step.startsWith('close:'));
    expect(closing.map((s) => s.step)).toEqual(STOP);
    // The server was closed (the widget told "going away") before any part stopped.
    expect(seen.filter((s) => s.step.startsWith('close:')).every((s) => !s.listening)).toBe(true);
    expect((await w.closed).code).toBe(1001);
    const at = (step: string) => closing.find((s) => s.step === step)!;
    // The conversations drain while the node still holds its lease; it leaves once none is left.
    expect(at('close:conversations')).toMatchObject({ cluster: 'member' });
    expect(at('close:conversations').active).toBeGreaterThan(0);
    expect(at('close:cluster')).toMatchObject({ cluster: 'member', active: 0 });
    expect(parley.runtime.cluster.status()).toBe('stopped');
  }, 120_000);
});
