// The JSON body parser for every route: prototype-poisoning keys refused
// (secure-json-parse, as fastify does) and nesting bounded, so a hostile body
// can't make validation or logging recurse without limit.
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { HttpError } from './errors.ts';

export const MAX_JSON_DEPTH = 32;

/**
 * Depth of nested arrays/objects, or the first depth found above `limit` (the walk stops there, so it
 * recurses at most limit + 1 levels on hostile input, and allocates nothing on the way).
 */
export function jsonDepth(value: unknown, limit: number): number {
  return depthBelow(value, 0, limit);
}

// Module-level rather than a closure: a closure would be allocated (and named) on every call.
function depthBelow(v: unknown, depth: number, limit: number): number {
  if (v === null || typeof v !== 'object') return depth;
  const here = depth + 1;
  if (here > limit) return here;
  let max = here;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const d = depthBelow(v[i], here, limit);
      if (d > max && (max = d) > limit) return max;
    }
  } else {
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      const d = depthBelow((v as Record<string, unknown>)[key], here, limit);
      if (d > max && (max = d) > limit) return max;
    }
  }
  return max;
}

export function installJsonBodyParser(app: FastifyInstance) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    let json: unknown;
    try {
      json = sjson.parse(text, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      return done(new HttpError(400, 'bad_request', 'Body is not valid JSON'), undefined);
    }
    if (jsonDepth(json, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
      return done(new HttpError(400, 'bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    done(null, json);
  });
}
