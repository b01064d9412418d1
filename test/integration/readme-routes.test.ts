// The README's "HTTP interface" table is where a newcomer looks a route up: every route a running Parley serves is in
// it (the inbox page was not), and every path in it is served. Read from the real server's routes (fastify's own
// list), not from the source.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { WA } from '../support/whatsapp.ts';

let p: TestParley;
beforeAll(async () => {
  // Every part that has routes on: the demo backend (/demo/session) and WhatsApp (its webhook, media).
  p = await startParley({ config: { demo: { backend: true }, channels: { whatsapp: { enabled: true, provider: 'meta', ...WA } } } });
});
afterAll(() => p?.close());

/** Every path fastify routes, from its printed tree (`├── /segment (GET, HEAD)`, four characters per level). */
function servedPaths(tree: string): string[] {
  const stack: string[] = [];
  const paths: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (\S+) \(([^)]+)\)$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    paths.push(stack.join(''));
  }
  return paths;
}

/** The paths of the README's HTTP interface table (`:param`, `<lang>` and a query kept out of the comparison). */
function documentedPaths(): string[] {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## HTTP interface'), readme.indexOf('### Test mode'));
  const paths: string[] = [];
  for (const row of section.split('\n').filter((l) => /^\| (GET|POST|PUT|DELETE)/.test(l))) {
    const cell = row.split('|')[2];
    for (const m of cell.matchAll(/`(\/[^`]*)`/g)) paths.push(m[1].replace(/\?.*$/, ''));
  }
  return paths;
}

const shape = (path: string) => path.replace(/:[A-Za-z]+/g, ':_').replace(/<[a-z]+>/g, '*');
const matches = (documented: string, served: string) =>
  new RegExp(`^${shape(documented).replace(/[.]/g, '\\.').replace(/\*/g, '[a-z]+')}$`).test(shape(served));

describe("the README's HTTP interface table", () => {
  it("lists every route the server serves (test mode and the pages' bundles aside), and only those", () => {
    const all = servedPaths(p.app.printRoutes({ commonPrefix: false }));
    // test mode's routes have their own section; the dashboard's and the inbox's bundles come with their pages
    const served = all.filter((s) => !s.startsWith('/__test__/') && !['/dashboard.js', '/inbox.js'].includes(s));
    expect(served.length).toBeGreaterThan(50);
    const documented = documentedPaths();
    expect(served.filter((s) => !documented.some((d) => matches(d, s)))).toEqual([]);
    expect(documented.filter((d) => !all.some((s) => matches(d, s)))).toEqual([]);
  });
});
