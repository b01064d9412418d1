// Builds one Parley process: services, actors, HTTP routes and WebSocket
// gateways. `createParley` is what main.ts and every integration test call.
import { join } from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { createClock, type Clock } from './clock.ts';
import { PROJECT_ROOT } from './config/load.ts';
import { readVersion } from './project-root.ts';
import type { Config } from './config/schema.ts';
import { frameworkErrors, installErrorHandling } from './http/errors.ts';
import { installJsonBodyParser } from './http/json-body.ts';
import { installUrlTextCheck } from './http/url-text.ts';
import { slowClientOptions } from './http/slow-clients.ts';
import { addLogSecrets, createLogger, type Logger } from './logger.ts';
import { configuredSecrets, resolveSecret } from './secret.ts';
import { assertStorageWritable } from './storage-check.ts';
import { openStore } from './store/open.ts';
import { createTelemetryRecorder } from './telemetry/recorder.ts';
import type { Services } from './services.ts';
import { createLifecycle, registerOps, wireComponents, type LifecycleStep, type WiredComponents } from './wiring/index.ts';

export interface ParleyOptions {
  config: Config;
  configPath?: string;
  testMode?: boolean;
  clock?: Clock;
  logger?: Logger;
  logDestination?: DestinationStream;
  /** Told each start and stop step of each part, in order (tests of the order; src/README.md, "The composition root"). */
  onLifecycleStep?: (step: LifecycleStep) => void;
}

export interface Parley {
  app: FastifyInstance;
  services: Services;
  /** The wired runtime (conversation host, SDK hub, channels): for diagnostics, benchmarks and tests. */
  runtime: WiredComponents;
  /** Starts listening; resolves with the base URL (http://host:port). */
  start(): Promise<string>;
  /** Stops accepting and closes sockets (1001), drains conversations, stops actors, flushes telemetry and the store. */
  stop(): Promise<void>;
  url(): string;
}

export const PUBLIC_DIR = join(PROJECT_ROOT, 'public', 'build');
const VERSION = readVersion(PROJECT_ROOT);

export async function createParley(o: ParleyOptions): Promise<Parley> {
  const { config } = o;
  const logger = o.logger ?? createLogger(config.logging.level, o.logDestination);
  addLogSecrets(logger, configuredSecrets(config, config.secret));
  const clock = o.clock ?? createClock();
  assertStorageWritable(config.storage.path);
  const store = await openStore(config.storage, { logger, clock });
  const { secret, generated, file: secretFile } = resolveSecret(config.secret, config.storage.path);
  addLogSecrets(logger, [secret]); // a generated one is known only now
  const telemetry = createTelemetryRecorder({ store, clock, logger, enabled: config.telemetry.enabled, prices: config.llm.prices });
  const services: Services = {
    config,
    clock,
    store,
    logger,
    telemetry,
    secret,
    paths: { config: o.configPath ?? '(inline)', storage: config.storage.path, public: PUBLIC_DIR },
    version: VERSION,
    testMode: o.testMode ?? false,
  };

  const app: FastifyInstance = Fastify({
    // Per-request lines are info; the http logger starts at warn so only problems are written.
    loggerInstance: logger.child({ component: 'http' }, { level: logger.levelVal > 40 ? logger.level : 'warn' }) as unknown as FastifyBaseLogger,
    bodyLimit: config.server.body_limit_bytes,
    trustProxy: config.server.trust_proxy,
    forceCloseConnections: true,
    // The parts start on fastify's hooks (src/README.md, "The composition root"), and the cluster's join in onReady may
    // wait a whole lease (up to cluster.lease_seconds) for its id: fastify's 10 s hook timeout would cut it short.
    pluginTimeout: 0,
    frameworkErrors,
    ...slowClientOptions(config.server.request_timeout_ms),
  });
  installErrorHandling(app);
  installJsonBodyParser(app);
  installUrlTextCheck(app);

  let url = '';
  // The root's own onListen runs before every part's: they see the URL (the demo backend connects to it).
  app.addHook('onListen', async () => {
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.server.port;
    url = `http://${config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host}:${port}`;
    if (!config.server.base_url) services.config.server.base_url = url;
  });
  const lifecycle = createLifecycle({ logger, record: o.onLifecycleStep });
  const components = await wireComponents({ app, services, lifecycle, url: () => url });

  await registerOps(app, services, components, PUBLIC_DIR);
  await app.register(lifecycle.last());

  let stopped = false;
  return {
    app,
    services,
    runtime: components,
    url: () => url,
    async start() {
      // The parts start in the order they were registered: the node joins the cluster before it listens (onReady),
      // the rest once it listens (onListen).
      await app.listen({ host: config.server.host, port: config.server.port });
      await lifecycle.started();
      logger.info({ url, version: VERSION, storage: store.location, testMode: services.testMode }, 'parley listening');
      if (generated) logger.warn(`SERVICE_SDK_SECRET is not set: generated a service secret, kept in ${secretFile}`);
      return url;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // First stop accepting and close every socket with 1001 (preClose), so nothing new arrives while the
      // conversation host drains; then the parts stop in the reverse of their order (onClose: the conversations drain,
      // the node leaves the cluster last); then telemetry flushes and the store closes.
      try {
        await app.close();
      } catch (err) {
        logger.warn({ err }, 'closing the HTTP server failed');
      }
      await telemetry.close();
      await store.close();
    },
  };
}
