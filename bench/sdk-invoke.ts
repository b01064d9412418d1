// SDK invoke round trip (hub.invoke → /sdk gateway → @parley/sdk handler → result)
// against a raw `ws` echo round trip over the same loopback, measured in one run.
// Run: npx tsx bench/sdk-invoke.ts   (target: p50 ratio ≤ 1.3)
// No store is on this path (an invoke is socket work only), so BENCH_ENGINE=postgres measures the same thing.
import Fastify from 'fastify';
import websocket from '@fastify/websocket';
import { WebSocket, WebSocketServer } from 'ws';
import { createClient } from '../sdk/src/index.ts';
import { MAX_FRAME_BYTES } from '../sdk/src/protocol.ts';
import { createClock } from '../src/clock.ts';
import { createLogger } from '../src/logger.ts';
import type { Config } from '../src/config/schema.ts';
import type { Store } from '../src/store/repos.ts';
import type { Services } from '../src/services.ts';
import type { Telemetry } from '../src/telemetry/types.ts';
import { createSupervisorRuntime } from '../src/runtime/supervisor.ts';
import { createSdkHub } from '../src/sdk/hub.ts';
import { closeWebSocketsGoingAway } from '../src/http/websocket-scope.ts';
import { sdkGatewayPlugin } from '../src/sdk/gateway.ts';
import { benchEngine } from './lib.ts';

const N = Number(process.env.N ?? 5000);
const WARMUP = Number(process.env.WARMUP ?? 3000);
const SECRET = 'bench-secret';
const CTX = { customerId: 'cus_1', channel: 'web' as const, conversationId: 'conv_1' };
const ARGS = { orderId: 'A-1001' };
const DATA = { orderId: 'A-1001', status: 'shipped', items: 3 };

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const summary = (samples: number[]) => {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / s.length };
};
const fmt = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

type RoundTrip = () => Promise<unknown>;

async function startRawEcho(): Promise<{ once: RoundTrip; stop: () => Promise<void> }> {
  // The same wire work as an invoke: JSON frame out, parse, JSON frame back, parse.
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: MAX_FRAME_BYTES });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) =>
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString()) as { id: string };
      ws.send(JSON.stringify({ type: 'result', id: f.id, ok: true, data: DATA }));
    }),
  );
  const { port } = wss.address() as { port: number };
  const ws = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise<void>((r) => ws.once('open', () => r()));
  let waiting: (() => void) | undefined;
  ws.on('message', (d) => {
    JSON.parse(d.toString());
    waiting?.();
  });
  let i = 0;
  return {
    once: () =>
      new Promise<void>((r) => {
        waiting = r;
        ws.send(JSON.stringify({ type: 'invoke', id: `e${i++}`, name: 'lookup_order', args: ARGS, context: CTX }));
      }),
    stop: async () => {
      ws.close();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}

async function startSdk(): Promise<{ once: RoundTrip; stop: () => Promise<void> }> {
  const clock = createClock();
  const logger = createLogger('silent');
  const telemetry: Telemetry = { event() {}, turnCall() {}, subscribe: () => () => {}, flush: async () => {}, close: async () => {} };
  const services: Services = {
    config: { safety: { invoke_timeout_ms: 10_000 } } as unknown as Config,
    clock,
    store: {} as Store,
    logger,
    telemetry,
    secret: SECRET,
    paths: { config: '', storage: '', public: '' },
    version: 'bench',
    testMode: false,
  };
  const app = Fastify();
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES }, preClose: closeWebSocketsGoingAway });
  const supervisor = createSupervisorRuntime({ clock, logger, telemetry, idleMs: 60_000, passivate: () => {} });
  const hub = createSdkHub({ services, supervisor });
  await app.register(sdkGatewayPlugin, { services, hub, supervisor });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const client = createClient().expose(
    'lookup_order',
    { parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
    () => DATA,
  );
  await client.listen({ secret: SECRET, url });
  let i = 0;
  return {
    once: async () => {
      const r = await hub.invoke('lookup_order', ARGS, CTX, { invocationId: `i${i++}` });
      if (!r.ok) throw new Error(`invoke failed: ${JSON.stringify(r)}`);
    },
    stop: async () => {
      await client.close();
      await app.close();
      supervisor.stop();
    },
  };
}

// Both paths live in one process and are measured in alternating blocks, so JIT
// warm-up, GC and machine noise fall on both alike.
const raw = await startRawEcho();
const sdk = await startSdk();
for (let i = 0; i < WARMUP; i++) {
  await raw.once();
  await sdk.once();
}
const BLOCK = 250;
const samples = { raw: [] as number[], sdk: [] as number[] };
for (let done = 0; done < N; done += BLOCK) {
  for (const [name, path] of [
    ['raw', raw],
    ['sdk', sdk],
  ] as const) {
    for (let i = 0; i < BLOCK; i++) {
      const t = performance.now();
      await path.once();
      samples[name].push(performance.now() - t);
    }
  }
}
await sdk.stop();
await raw.stop();

const r = summary(samples.raw);
const s = summary(samples.sdk);
if (benchEngine() === 'postgres') console.log('BENCH_ENGINE=postgres: no store on this path, the figure is the same on both engines');
console.log(`N=${N} sequential round trips per path after ${WARMUP} warm-up, loopback, alternating blocks of ${BLOCK}`);
console.log(`raw ws echo : p50 ${fmt(r.p50)}  p99 ${fmt(r.p99)}  mean ${fmt(r.mean)}`);
console.log(`SDK invoke  : p50 ${fmt(s.p50)}  p99 ${fmt(s.p99)}  mean ${fmt(s.mean)}`);
const ratio = s.p50 / r.p50;
console.log(`p50 ratio SDK/raw: ${ratio.toFixed(2)} (target ≤ 1.3) ${ratio <= 1.3 ? 'OK' : 'OVER TARGET'}`);
