// Valid requests the route sweep (test/security/route-sweep.test.ts) starts from to go past the first check: most
// bodies and queries are strict zod objects, so a body with every field name at once, or a query with every key, is
// refused whole before any value is looked at. From a valid body the sweep changes one field at a time (missing, the
// wrong type, NUL, huge, …) and adds an unknown one; a query key gets one hostile value at a time. A route with no
// seed is still swept with every generic case; a seed whose route is gone fails the sweep (it would test nothing).
import type { HostileCase, SweptRoute } from './route-sweep.ts';
import { webhookBody } from './whatsapp.ts';

/** A valid body per route (`METHOD url`); `{conversationId}`, `{email}`, `{unique}` and `{nowSeconds}` are filled in by the sweep. */
export const BODY_SEEDS: Record<string, Record<string, unknown>> = {
  'POST /auth/magic-link': { email: 'seed@example.com', externalId: 'seed-customer' },
  'POST /proactive': { customerExternalId: 'seed-customer', channel: 'web', content: 'hello', dedupKey: 'seed-1' },
  'POST /proactive/opt-in': { customerExternalId: 'seed-customer', optIn: true },
  'POST /customers/link': { externalId: 'seed-customer', phone: '+15550001234' },
  'POST /api/v1/agents': { name: 'Seed', email: 'seed-agent@example.com', role: 'agent' },
  'POST /api/v1/agents/sign-in': { email: '{email}', password: 'not the password' },
  'POST /api/v1/agents/set-password': { token: 'not-a-token', password: 'a long enough password' },
  'POST /api/v1/agents/me/keys': { name: 'seed key' },
  'POST /api/v1/inbox/conversations/:conversationId/assign': { agentId: 'agent_seed' },
  'POST /api/v1/inbox/conversations/:conversationId/messages': { text: 'hello from the inbox', id: 'seed-1' },
  'POST /api/v1/inbox/conversations/:conversationId/notes': { text: 'a note' },
  'POST /api/v1/inbox/conversations/:conversationId/typing': { on: true },
  'POST /api/v1/inbox/saved-replies': { shortcut: 'seed', text: 'a saved reply' },
  'POST /api/v1/knowledge/articles': { id: 'seed-article', title: 'Seed', body: '# Heading\n\nSome text.', format: 'markdown', locale: 'en', tags: ['seed'] },
  'POST /conversations/:conversationId/handoff': { reason: 'seed' },
  'POST /conversations/:conversationId/messages': { text: 'hello from a person', author: { name: 'Seed' }, id: 'seed-1' },
  'PUT /conversations/:conversationId/outcome/reason': { reason: 'other' },
  'POST /__test__/sdk/invoke': { name: 'noSuchFunction', args: { a: 1 } },
  'POST /__test__/clock': { offsetMs: 0 },
  'POST /__test__/telemetry': { persist: true },
  // A customer's text message, signed by the sweep; `{unique}` makes each message new (Meta's ids are de-duplicated).
  'POST /wa/webhook': webhookBody([{ from: '15550001234', id: 'wamid.seed.{unique}', timestamp: '{nowSeconds}', type: 'text', text: { body: 'hello' } }]),
};

/** A valid query per route that requires one, to which each hostile key is added. */
export const QUERY_SEEDS: Record<string, string> = {
  'GET /conversations': 'state=withHuman',
  'GET /api/v1/knowledge/search': 'q=hello',
  'GET /auth/verify': 'token=not-a-token',
};

/** The query keys routes read (their zod query schemas), each given one hostile value at a time. */
export const QUERY_KEYS = [
  'since',
  'until',
  'type',
  'conversationId',
  'customerId',
  'customerExternalId',
  'turnId',
  'limit',
  'cursor',
  'order',
  'bucketMs',
  'fit',
  'channel',
  'by',
  'state',
  'before',
  'q',
  'locale',
  'outcome',
  'customer',
  'view',
  'token',
  'gc',
  'hub.mode',
  'hub.verify_token',
  'hub.challenge',
];
const ONE_KEY_VALUES: [string, string][] = [
  ['NUL', 'a%00b'],
  ['NUL after a number', '1:a%00b'],
  ['long digits', '9'.repeat(400)],
  ['over 2^64', '18446744073709551616'],
  ['the latest date', '8640000000000000'],
  ['past the latest date', '8640000000000001'],
  ['zero', '0'],
  ['negative', '-1'],
  ['1e309', '1e309'],
  ['NaN', 'NaN'],
  ['emoji', '%F0%9F%98%80'],
  ['encoded lone surrogate', '%ED%A0%80'],
  ['long string', 'w'.repeat(2000)],
  ['repeated', '1&KEY=2'],
];

/** Each query key with each hostile value, alone or added to the route's seed query (GET routes: the ones that read a query). */
export function oneKeyQueries(route: SweptRoute, base: string): HostileCase[] {
  const seed = QUERY_SEEDS[`${route.method} ${route.url}`];
  return QUERY_KEYS.flatMap((key) =>
    ONE_KEY_VALUES.map(([name, value]): HostileCase => {
      const hostile = `${encodeURIComponent(key)}=${value.replace('KEY', encodeURIComponent(key))}`;
      return { seeded: true, name: `query ${key} ${name}`, path: `${base}?${seed ? `${seed}&` : ''}${hostile}` };
    }),
  );
}

const FIELD_VALUES: [string, unknown][] = [
  ['NUL', 'a\u0000b'],
  ['only NUL', '\u0000'],
  ['huge', 'h'.repeat(60_000)],
  ['emoji', '👩‍👩‍👧‍👦'],
  ['empty', ''],
  ['spaces', '   '],
  ['number', 1e308],
  ['negative', -1],
  ['null', null],
  ['boolean', false],
  ['array', ['a', 1]],
  ['object', { a: { b: 'c' } }],
  ['nested 30 deep', JSON.parse(`${'{"a":'.repeat(30)}1${'}'.repeat(30)}`)],
];

type Path = string[];

/** Every leaf of a seed (a value that is not an object or array), by its path. */
function leaves(value: unknown, at: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [at];
  return Object.entries(value).flatMap(([k, child]) => leaves(child, [...at, k]));
}

const REMOVE = Symbol('remove');

/** A copy of `seed` with the value at `path` replaced (or removed, from an object or an array). */
function changed(seed: Record<string, unknown>, path: Path, value: unknown): Record<string, unknown> {
  const copy = structuredClone(seed);
  let parent: Record<string, unknown> = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string, unknown>;
  const last = path[path.length - 1];
  if (value !== REMOVE) parent[last] = value;
  else if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete parent[last];
  return copy;
}

/**
 * From a route's seed body: each leaf (at any depth) missing and with each hostile value, an unknown field added, and
 * the seed itself. `fill` is called once per body: it may make each one unique.
 */
export function seededBodies(route: SweptRoute, path: string, fill: (s: string) => string): HostileCase[] {
  const seed = BODY_SEEDS[`${route.method} ${route.url}`];
  if (!seed) return [];
  const cases: HostileCase[] = [];
  const add = (name: string, value: Record<string, unknown>) =>
    cases.push({ seeded: true, name, path, body: Buffer.from(fill(JSON.stringify(value))), contentType: 'application/json' });
  add('seed', seed);
  add('seed with an unknown field', Object.assign({}, seed, { unknownField: 'x' }));
  for (const leaf of leaves(seed)) {
    const at = leaf.join('.');
    add(`seed without ${at}`, changed(seed, leaf, REMOVE));
    for (const [name, value] of FIELD_VALUES) add(`seed ${at} ${name}`, changed(seed, leaf, value));
  }
  return cases;
}
