// Serves the built browser bundles (widget, dashboard) and static pages from public/build.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sendError } from './errors.ts';

export interface StaticAsset {
  route: string;
  file: string;
  type: string;
  /** Cache-Control value. */
  cache: string;
}

export async function staticAssetsPlugin(app: FastifyInstance, o: { dir: string; assets: StaticAsset[] }) {
  for (const asset of o.assets) {
    const path = join(o.dir, asset.file);
    app.get(asset.route, async (request, reply) => {
      if (!existsSync(path)) return sendError(reply, 503, 'not_ready', `${asset.file} is not built (run npm run build:assets)`);
      const stat = statSync(path);
      const etag = `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
      reply.header('cache-control', asset.cache).header('etag', etag).header('x-content-type-options', 'nosniff');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(asset.type).send(readFileSync(path));
    });
  }
}
