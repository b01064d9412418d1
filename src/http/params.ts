// Text in the URL that no store can hold: a NUL (`%00`) in a path parameter. PostgreSQL's text cannot keep one (its
// lookups fail with "invalid byte sequence for encoding UTF8: 0x00", a 500), and no id Parley makes or takes holds
// one: refused with a 400 on every route, after its authentication (so a caller without credentials still gets 401).
import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';

export function installUrlTextCheck(app: FastifyInstance) {
  app.addHook('preHandler', async (request) => {
    const params = request.params as Record<string, string | undefined> | undefined;
    for (const [name, value] of Object.entries(params ?? {})) {
      if (value?.includes('\u0000')) throw new HttpError('bad_request', `${name}: a path parameter may not hold NUL (%00)`);
    }
  });
}
