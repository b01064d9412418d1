// GET /health (liveness) and GET /ready (readiness report of the spec).
import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { SdkHub, Services } from '../services.ts';
import type { ClusterMembership } from '../cluster/membership.ts';
import { clusterCheck, clusterReport } from '../cluster/report.ts';

export interface HealthOptions {
  services: Services;
  hub: Pick<SdkHub, 'connectionCount' | 'registeredCount' | 'catalog'>;
  /** `ok`, or the LLM's last loud failure (src/llm/loud-failures.ts). */
  llm?: { check(): string };
  cluster: Pick<ClusterMembership, 'view'>;
  widgetBundlePath: string;
  /** The MCP servers (`tools.mcp`): one that is down shows as degraded, never as not ready. */
  mcp?: { check(): string; report(): unknown[] };
}

export async function healthPlugin(app: FastifyInstance, o: HealthOptions) {
  app.get('/health', async () => ({ status: 'ok', version: o.services.version }));

  app.get('/ready', async (_request, reply) => {
    const store = o.services.store.checks();
    const widget = existsSync(o.widgetBundlePath) ? 'ok' : `missing bundle ${o.widgetBundlePath} (run npm run build:assets)`;
    const checks = {
      database: store.database,
      migrations: store.migrations,
      widget,
      sdk: { connected: o.hub.registeredCount() > 0, functions: o.hub.catalog().length },
      llm: o.llm?.check() ?? 'ok',
      ...(o.mcp?.report().length ? { mcp: { status: o.mcp.check(), servers: o.mcp.report() } } : {}),
    };
    // The spec's checks stay as they are; the cluster is a field of its own, and a node that is not a member (it lost
    // its lease and is joining again) takes no traffic.
    const view = o.cluster.view();
    const cluster = clusterReport(view);
    const failing = (['database', 'migrations', 'widget'] as const).filter((k) => checks[k] !== 'ok').map((k) => `${k}: ${checks[k]}`);
    const membership = clusterCheck(view);
    if (membership !== 'ok') failing.push(`cluster: ${membership}`);
    // A failing LLM is shared by every node: degraded, but still 200 (taking this node out would help nobody).
    if (failing.length === 0) return { status: checks.llm === 'ok' && (checks.mcp?.status ?? 'ok') === 'ok' ? 'ready' : 'degraded', checks, cluster };
    return reply.code(503).send({
      status: 'not_ready',
      checks,
      cluster,
      error: { code: 'not_ready', message: failing.join('; ') },
    });
  });
}
