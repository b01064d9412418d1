// The JSON body parser for every route: prototype-poisoning keys refused
// (secure-json-parse, as fastify does) and nesting bounded, so a hostile body
// can't make validation or logging recurse without limit; bytes that are not
// UTF-8, strings that are not valid Unicode and strings holding NUL (which
// PostgreSQL cannot store) refused, so what is stored is what was sent.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { HttpError } from './errors.ts';
import { NUL, NUL_REFUSED } from './storable-text.ts';

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

/** String.prototype.isWellFormed (Node 20; typed by the ES2024 lib, which this project does not target yet). */
const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

type TextFault = 'lone surrogate' | 'NUL';

/** What no store keeps as sent: a lone surrogate (UTF-8 cannot hold one), a NUL (PostgreSQL's text and jsonb cannot). */
const faultOf = (s: string): TextFault | undefined => (!wellFormed(s) ? 'lone surrogate' : s.includes(NUL) ? 'NUL' : undefined);

/**
 * Where the first string (or key) that is not valid Unicode or holds a NUL sits, e.g. `text` or `items.2.name`, and
 * which: JSON may spell lone surrogates (`"\ud800"`), which no UTF-8 store, log or client keeps as they are, and NUL
 * (`"\u0000"`), which PostgreSQL refuses (a lookup fails, a write never lands). undefined when every one is fine.
 * Call it on values whose depth jsonDepth has already bounded.
 */
function textFault(value: unknown): { path: string; fault: TextFault } | undefined {
  if (typeof value === 'string') {
    const fault = faultOf(value);
    return fault && { path: '', fault };
  }
  if (value === null || typeof value !== 'object') return undefined;
  // No allocation on the way (webhook bodies pass here): the path is built only for a refusal.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const below = textFault(value[i]);
      if (below !== undefined) return { path: below.path === '' ? String(i) : `${i}.${below.path}`, fault: below.fault };
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const inKey = faultOf(key);
    if (inKey) return { path: '(a key)', fault: inKey };
    const below = textFault((value as Record<string, unknown>)[key]);
    if (below !== undefined) return { path: below.path === '' ? key : `${key}.${below.path}`, fault: below.fault };
  }
  return undefined;
}

/** Why `value` (depth already bounded by jsonDepth) cannot be taken as sent, naming the field; undefined when it can. */
export function textFaultAt(value: unknown): string | undefined {
  const f = textFault(value);
  if (!f) return undefined;
  const path = f.path || 'the value';
  return f.fault === 'NUL'
    ? `${path}: ${NUL_REFUSED}`
    : `${path}: text is not valid Unicode (it holds a lone surrogate such as \\ud800); send well-formed text`;
}

export function installJsonBodyParser(app: FastifyInstance) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    // Bytes that are not UTF-8 would be decoded with replacement characters: the text stored would not be the text sent.
    if (!isUtf8(body as Buffer)) return done(new HttpError('bad_request', 'Body is not valid UTF-8'), undefined);
    const text = (body as Buffer).toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    let json: unknown;
    try {
      json = sjson.parse(text, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      return done(new HttpError('bad_request', 'Body is not valid JSON'), undefined);
    }
    if (jsonDepth(json, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
      return done(new HttpError('bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    const fault = textFaultAt(json);
    if (fault !== undefined) return done(new HttpError('bad_request', fault), undefined);
    done(null, json);
  });
}
