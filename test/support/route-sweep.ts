// The sweep of every HTTP route under hostile input (test/security/route-sweep.test.ts): the routes as the running app
// lists them, the hostile requests made for one route, and a raw HTTP client that sends them byte for byte (fetch
// would normalise `..` out of a path, refuse a body on GET and re-encode what it is given).
import { Agent, request } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { oneKeyQueries, QUERY_KEYS, seededBodies } from './route-seeds.ts';

export interface SweptRoute {
  method: string;
  /** As registered, with its `:params`. */
  url: string;
}

const LINE = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([A-Z, ]+)\))?$/;

/**
 * Every route of `app` with its method, read from fastify's own tree (`printRoutes`). Each route found is checked with
 * `hasRoute`, and every line of the tree must be understood: a change of the tree's format fails loudly rather than
 * sweeping fewer routes.
 */
export function listRoutes(app: FastifyInstance): SweptRoute[] {
  const tree = app.printRoutes({ commonPrefix: false });
  const prefixes: string[] = [];
  const routes: SweptRoute[] = [];
  for (const line of tree.split('\n')) {
    if (!line.includes('── ')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`printRoutes line not understood: ${JSON.stringify(line)}`);
    const depth = m[1].length / 4;
    const url = (depth > 0 ? prefixes[depth - 1] : '') + m[2];
    prefixes[depth] = url;
    prefixes.length = depth + 1;
    for (const method of m[3]?.split(', ') ?? []) {
      if (!app.hasRoute({ method: method as 'GET', url })) throw new Error(`printRoutes listed ${method} ${url}, which hasRoute does not know`);
      routes.push({ method, url });
    }
  }
  return routes;
}

/** One hostile request to a route: its path (and query), body bytes and content type. */
export interface HostileCase {
  name: string;
  path: string;
  body?: Buffer;
  contentType?: string;
  /** Made from a seed (one query key, one body field): sent with the route's credential only. */
  seeded?: true;
  /** May be refused by the router or Node before the route and its authentication run (its path or URL is the fault). */
  beforeRoute?: true;
}

// Field names the routes read (zod schemas of src/**/routes.ts and wire.ts), so a hostile value reaches the
// schema's own checks rather than only "missing field".
const FIELDS = [
  'text',
  'content',
  'body',
  'email',
  'password',
  'name',
  'role',
  'token',
  'externalId',
  'customerExternalId',
  'customerId',
  'phone',
  'channel',
  'dedupKey',
  'optIn',
  'offsetMs',
  'persist',
  'reason',
  'title',
  'url',
  'tags',
  'agentId',
  'shortcut',
  'id',
  'conversationId',
  'args',
  'language',
  'query',
  'q',
  'limit',
  'cursor',
  'since',
  'until',
  'state',
  'outcome',
  'format',
  'note',
  'typing',
  'messageId',
  'source',
  'html',
  'sitemap',
  'urls',
  'kind',
  'type',
  'template',
  'expiresAt',
];

const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { a: nested(depth - 1, leaf) });

/** Values of the wrong kind or at the edges, each put in every field at once. */
const HOSTILE_VALUES: [string, unknown][] = [
  ['huge string', 'x'.repeat(60_000)],
  ['NUL', 'a\u0000b'],
  ['control characters', '\u0001\u0008\u001b[31m\r\n\u007f'],
  ['emoji and joiners', '👩‍👩‍👧‍👦🏳️‍🌈\u200d\u200b\ufeff'],
  ['right-to-left', '\u202eevil\u202c مرحبا'],
  ['empty string', ''],
  ['huge number', 1e308],
  ['unsafe integer', 2 ** 60],
  ['negative', -1],
  ['fraction', 0.5],
  ['"NaN"', 'NaN'],
  ['boolean', true],
  ['null', null],
  ['array', [1, 'two', null]],
  ['object', { nested: { deeper: [] } }],
  ['nested 30 deep', nested(30, 'x')],
  ['path-like', '../../etc/passwd'],
  ['date-like', '9999-99-99T99:99:99Z'],
];

const QUERY_VALUES: [string, string][] = [
  ['repeated keys', '1&KEY=2'],
  ['array', '&KEY[]=1&KEY[]=2'],
  ['bracketed key', '&KEY[a][b]=1'],
  ['huge number', '1e309'],
  ['long digits', '9'.repeat(400)],
  ['negative', '-1'],
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['fraction', '0.5'],
  ['empty', ''],
  ['NUL', '%00'],
  ['encoded lone surrogate', '%ED%A0%80'],
  ['bad percent-encoding', '%ZZ%'],
  ['emoji', '%F0%9F%98%80'],
  ['long string', 'y'.repeat(300)], // × every key: under the 16 KiB of headers Node takes
];

const PARAM_VALUES: [string, string][] = [
  ['too long', 'p'.repeat(2000)],
  ['just over 100', 'p'.repeat(101)],
  ['dot dot', '..'],
  ['encoded traversal', '..%2F..%2Fetc%2Fpasswd'],
  ['encoded dots', '%2e%2e'],
  ['NUL', '%00'],
  ['NUL inside', 'conv%00x'],
  ['emoji', '%F0%9F%98%80'],
  ['encoded lone surrogate', '%ED%A0%80'],
  ['overlong UTF-8', '%C0%AE%C0%AE'],
  ['bad percent-encoding', '%ZZ'],
  ['space', 'a%20b'],
  ['unicode', 'caf%C3%A9'],
];

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const everyField = (value: unknown) => Object.fromEntries(FIELDS.map((f) => [f, value]));

/** Bodies for a route that takes one: malformed, the wrong type, missing or extra fields, hostile values, wrong types. */
function hostileBodies(bodyLimit: number): Omit<HostileCase, 'path'>[] {
  const asJson = (name: string, body: Buffer | string) => ({ name, body: Buffer.from(body), contentType: 'application/json' });
  return [
    asJson('malformed JSON', '{"a":'),
    asJson('JSON array', '[]'),
    asJson('JSON string', '"a string"'),
    asJson('JSON number', '42'),
    asJson('JSON null', 'null'),
    asJson('JSON true', 'true'),
    asJson('empty body', ''),
    asJson('whitespace body', ' \r\n '),
    asJson('empty object', '{}'),
    asJson('an unexpected field only', '{"unexpected":true}'),
    ...HOSTILE_VALUES.map(([name, value]) => asJson(`every field ${name}`, json(everyField(value)))),
    asJson('nested beyond the limit', `${'['.repeat(10_000)}${']'.repeat(10_000)}`),
    asJson('lone surrogate', '{"text":"a\\ud800b","content":"\\udfff","name":"\\ud800"}'),
    asJson('not UTF-8', Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d])),
    asJson('prototype poisoning', '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'),
    asJson('over the body limit', json({ text: 'z'.repeat(bodyLimit + 10) })),
    { name: 'text/plain', body: json({ text: 'hi' }), contentType: 'text/plain' },
    { name: 'form-encoded', body: Buffer.from('text=hi&text=there'), contentType: 'application/x-www-form-urlencoded' },
    {
      name: 'multipart',
      body: Buffer.from('--x\r\ncontent-disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n'),
      contentType: 'multipart/form-data; boundary=x',
    },
    { name: 'JSON as UTF-16', body: json({ text: 'hi' }), contentType: 'application/json; charset=utf-16' },
    { name: 'no content type', body: json({ text: 'hi' }) },
  ];
}

/**
 * Every hostile request for one route. `bodyLimit`: the server's `server.body_limit_bytes`; `param`: a path
 * parameter's value in the requests that are not about the path (an id that exists goes further); `fill`: the
 * placeholders of seed bodies.
 */
export function hostileCases(route: SweptRoute, o: { bodyLimit: number; param: (name: string) => string; fill: (s: string) => string }): HostileCase[] {
  const params = route.url.match(/:[A-Za-z]+/g) ?? [];
  const fill = (value?: string) => params.reduce((path, p) => path.replace(p, value ?? o.param(p.slice(1))), route.url);
  const base = fill();
  const cases: HostileCase[] = [{ name: 'plain', path: base }];
  for (const [name, value] of PARAM_VALUES) if (params.length) cases.push({ name: `param ${name}`, path: fill(value), beforeRoute: true });
  cases.push({ name: 'suffix ..', path: `${base}/..`, beforeRoute: true }, { name: 'suffix %00', path: `${base}%00`, beforeRoute: true });
  cases.push({ name: 'URL over the header limit', path: `${base}?q=${'u'.repeat(20_000)}`, beforeRoute: true });
  for (const [name, value] of QUERY_VALUES) {
    const query = QUERY_KEYS.map((k) => `${encodeURIComponent(k)}=${value.replaceAll('KEY', encodeURIComponent(k))}`).join('&');
    cases.push({ name: `query ${name}`, path: `${base}?${query}` });
  }
  if (route.method === 'GET') cases.push(...oneKeyQueries(route, base));
  if (route.method === 'HEAD') return cases;
  const bodies = hostileBodies(o.bodyLimit);
  // A GET with a body is unusual but legal: a few of them; a route that takes a body gets them all.
  const chosen = route.method === 'GET' ? bodies.filter((b) => ['malformed JSON', 'JSON array', 'not UTF-8'].includes(b.name)) : bodies;
  for (const b of chosen) cases.push({ ...b, path: base, name: `body ${b.name}` });
  cases.push(...seededBodies(route, base, o.fill));
  return cases;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One raw request on `agent`; rejects when no whole answer came within `timeoutMs` (a hang). */
export function rawRequest(
  agent: Agent,
  base: string,
  o: { method: string; path: string; headers: Record<string, string>; body?: Buffer },
  timeoutMs: number,
): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...o.headers };
    if (o.body) headers['content-length'] = o.body.length;
    const req = request({ agent, host: url.hostname, port: url.port, method: o.method, path: o.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(o.body);
  });
}

/** Runs `work` over `items`, at most `width` at a time. */
export async function inPool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

export { Agent };
