// The operators' routes and the static assets (no start, no stop): /health and /ready, /diagnostics, the widget's
// and the dashboard's files, the test-mode routes. They read across every part, so they register after them.
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { healthPlugin } from '../ops/health.ts';
import { staticAssetsPlugin } from '../http/static-assets.ts';
import { testModePlugin } from '../ops/test-mode.ts';
import { scenarioTestPlugin } from '../ops/scenario-test.ts';
import { diagnosticsPlugin } from '../ops/diagnostics.ts';
import type { WiredComponents } from './components.ts';
import { WIDGET_LOCALES } from '../../sdk/src/widget-limits.ts';

/**
 * The widget's languages but English, each a file the build writes from widget/src/locale-tables.ts. The widget asks
 * for `?v=<content hash>`, so a file is cached for a year and a new build is asked for under new URLs; any origin may
 * read it (plain public words, no cookies: `credentials: 'omit'`).
 */
const widgetLocaleAssets = () =>
  WIDGET_LOCALES.filter((lang) => lang !== 'en').map((lang) => ({
    route: `/widget-locale-${lang}.json`,
    file: `widget-locale-${lang}.json`,
    type: 'application/json; charset=utf-8',
    cache: 'public, max-age=31536000, immutable',
    precompressed: true,
    headers: { 'access-control-allow-origin': '*' },
  }));

export async function registerOps(app: FastifyInstance, services: Services, components: WiredComponents, publicDir: string) {
  await app.register(healthPlugin, {
    services,
    hub: components.hub,
    llm: components.llmFailures,
    mcp: components.mcp,
    cluster: components.cluster,
    widgetBundlePath: join(publicDir, 'widget.js'),
  });
  await app.register(staticAssetsPlugin, {
    dir: publicDir,
    assets: [
      {
        route: '/widget.js',
        file: 'widget.js',
        type: 'application/javascript; charset=utf-8',
        cache: 'public, max-age=300, must-revalidate',
        precompressed: true,
      },
      ...widgetLocaleAssets(),
      { route: '/demo.html', file: 'demo.html', type: 'text/html; charset=utf-8', cache: 'no-cache' },
      { route: '/telemetry', file: 'telemetry.html', type: 'text/html; charset=utf-8', cache: 'no-cache' },
      // The agent inbox (src/inbox/, inbox/src/).
      { route: '/inbox', file: 'inbox.html', type: 'text/html; charset=utf-8', cache: 'no-cache' },
      { route: '/inbox.js', file: 'inbox.js', type: 'application/javascript; charset=utf-8', cache: 'no-cache', precompressed: true },
      // The one-time link of a new account (src/agents/): the dashboard's page shows the set-password form there.
      { route: '/agents/set-password', file: 'telemetry.html', type: 'text/html; charset=utf-8', cache: 'no-store' },
      {
        route: '/dashboard.js',
        file: 'dashboard.js',
        type: 'application/javascript; charset=utf-8',
        cache: 'public, max-age=300, must-revalidate',
        precompressed: true,
      },
    ],
  });
  await app.register(diagnosticsPlugin, {
    services,
    hub: components.hub,
    cluster: components.cluster,
    liveActors: components.liveActors,
    sections: components.diagnostics,
  });
  // Test mode lists the functions callable from this node (every node's), as the features see them.
  if (services.testMode) await app.register(testModePlugin, { services, hub: components.clusterHub });
  // Test mode shows `parley test --url` the tool calls' arguments and lets it call the backend (behind the secret).
  if (services.testMode) await app.register(scenarioTestPlugin, { services, history: services.store.history, hub: components.clusterHub });
}
