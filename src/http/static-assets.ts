// Serves the built browser bundles (widget, dashboard) and static pages from public/build.
// Bundles are served precompressed when the build wrote `<file>.br` / `<file>.gz` beside them (brotli first, then
// gzip, as the request's Accept-Encoding allows): compressed once at build time, never per request.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyInstance } from 'fastify';
import { sendError } from './errors.ts';

export interface StaticAsset {
  route: string;
  file: string;
  type: string;
  /** Cache-Control value. */
  cache: string;
  /** Look for precompressed siblings (`.br`, `.gz`). */
  precompressed?: boolean;
  /** More response headers (e.g. CORS for a file other origins' pages fetch). */
  headers?: Record<string, string>;
}

const ENCODINGS = { br: '.br', gzip: '.gz' } as const;
type Encoding = keyof typeof ENCODINGS;

const etagOf = (path: string, suffix = '') => {
  const stat = statSync(path);
  return `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}${suffix}"`;
};

export async function staticAssetsPlugin(app: FastifyInstance, o: { dir: string; assets: StaticAsset[] }) {
  for (const asset of o.assets) {
    const path = join(o.dir, asset.file);
    app.get(asset.route, async (request, reply) => {
      if (!existsSync(path)) return sendError(reply, 'not_ready', `${asset.file} is not built (run npm run build:assets)`);
      let file = path;
      let encoding: Encoding | undefined;
      if (asset.precompressed) {
        reply.header('vary', 'accept-encoding');
        const available = (Object.keys(ENCODINGS) as Encoding[]).filter((e) => existsSync(path + ENCODINGS[e]));
        const accepted = request.headers['accept-encoding'];
        encoding = typeof accepted === 'string' && available.length ? ((negotiate(accepted, available) as Encoding | null) ?? undefined) : undefined;
        // A compressed copy older than the bundle is stale (a rebuild in progress): serve the bundle itself.
        if (encoding && statSync(path + ENCODINGS[encoding]).mtimeMs < statSync(path).mtimeMs) encoding = undefined;
        if (encoding) file = path + ENCODINGS[encoding];
      }
      // Each representation has its own ETag, so a cache never answers a gzip request with brotli bytes.
      const etag = etagOf(path, encoding ? `-${encoding}` : '');
      reply.header('cache-control', asset.cache).header('etag', etag).header('x-content-type-options', 'nosniff');
      if (asset.headers) reply.headers(asset.headers);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      if (encoding) reply.header('content-encoding', encoding);
      return reply.type(asset.type).send(readFileSync(file));
    });
  }
}
