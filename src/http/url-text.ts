// Text in the URL that no store can hold: a NUL (`%00`) in a path parameter or a query value. PostgreSQL's text cannot
// keep one (a lookup fails with "invalid byte sequence for encoding UTF8: 0x00", a 500), and no id, filter or search
// of Parley's holds one: refused with a 400 on every route, after its authentication (a caller without credentials
// still gets 401). JSON bodies are checked by their parser (json-body.ts).
import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';

const holdsNul = (value: unknown): boolean => (typeof value === 'string' ? value.includes('\u0000') : Array.isArray(value) ? value.some(holdsNul) : false);

export function installUrlTextCheck(app: FastifyInstance) {
  app.addHook('preHandler', async (request) => {
    for (const [where, values] of [
      ['path parameter', request.params],
      ['query value', request.query],
    ] as const) {
      for (const [name, value] of Object.entries((values ?? {}) as Record<string, unknown>)) {
        if (holdsNul(value) || name.includes('\u0000'))
          throw new HttpError('bad_request', `${name.replaceAll('\u0000', '\\u0000')}: a ${where} may not hold NUL (%00)`);
      }
    }
  });
}
