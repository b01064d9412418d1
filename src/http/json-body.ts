// The JSON body parser for every route: prototype-poisoning keys refused
// (secure-json-parse, as fastify does) and nesting bounded, so a hostile body
// can't make validation or logging recurse without limit.
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { HttpError } from './errors.ts';

export const MAX_JSON_DEPTH = 32;

/** Depth of nested arrays/objects, iteratively (no recursion on hostile input). */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const depth = d + 1;
    if (depth > max) max = depth;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth]);
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
    if (jsonDepth(json, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return done(new HttpError(400, 'bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    done(null, json);
  });
}
