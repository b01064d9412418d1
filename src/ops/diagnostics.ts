// GET /diagnostics: memory, paths, the SDK catalog and every live actor.
// Public in test mode. Otherwise it answers only with the service secret, and a
// request without it gets exactly the 404 of an unknown route: the endpoint is
// not advertised to anyone who may not read it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hasServiceSecret } from '../http/auth.ts';
import { notFound } from '../http/errors.ts';
import type { SdkHub, Services } from '../services.ts';
import type { ClusterMembership } from '../cluster/membership.ts';
import { clusterReport } from '../cluster/report.ts';
import type { LiveActor } from '../runtime/supervisor.ts';

export interface DiagnosticsOptions {
  services: Services;
  hub: Pick<SdkHub, 'catalog' | 'connectionCount' | 'registeredCount'>;
  cluster: Pick<ClusterMembership, 'view'>;
  liveActors: () => LiveActor[];
  /** Extra sections contributed by features (queues, daemon, …). */
  sections?: () => Promise<Record<string, unknown>> | Record<string, unknown>;
}

export async function diagnosticsPlugin(app: FastifyInstance, o: DiagnosticsOptions) {
  const hidden = async (request: FastifyRequest) => {
    if (!hasServiceSecret(request.headers, o.services.secret)) throw notFound(`No route ${request.method} ${request.url.split('?')[0]}`);
  };
  const opts = o.services.testMode ? {} : { onRequest: hidden };
  app.get('/diagnostics', opts, async (request) => {
    // Test mode: `?gc=1` collects garbage first when the process runs with --expose-gc (soak figures).
    if (o.services.testMode && (request.query as { gc?: string }).gc === '1') (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    const actors = o.liveActors();
    const view = o.cluster.view();
    return {
      version: o.services.version,
      uptimeSeconds: Math.round(process.uptime()),
      now: o.services.clock.now(),
      clockOffsetMs: o.services.clock.offset(),
      memory: { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external },
      paths: o.services.paths,
      storage: Object.assign({ engine: o.services.store.engine, location: o.services.store.location }, o.services.store.checks()),
      sdk: {
        connections: o.hub.connectionCount(),
        registered: o.hub.registeredCount(),
        catalog: o.hub.catalog().map((f) => ({ name: f.name, mode: f.mode, description: f.description, connection: f.connectionId })),
      },
      cluster: Object.assign(clusterReport(view), view.lastLoss ? { lastLoss: view.lastLoss } : {}),
      actors: { count: actors.length, list: actors },
      ...((await o.sections?.()) ?? {}),
    };
  });
}
