// Issue 36, part 1: synced sources against a local web site (sitemap, robots.txt, pages with ETag and
// Last-Modified), a real LMDB store and a manual clock for the schedule.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createKnowledge } from '../../src/knowledge/service.ts';
import { createKnowledgeSync, type KnowledgeSync } from '../../src/knowledge/sync.ts';
import { openTestStore, type TestStore } from '../support/store.ts';

const DAY = 24 * 3600_000;
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

interface Site {
  url: string;
  requests: { path: string; ifNoneMatch?: string; ifModifiedSince?: string }[];
  listed: string[];
  sitemapStatus: number;
  pages: Map<string, { status?: number; html: string; etag?: string; lastModified?: string }>;
}

/** A page with its boilerplate around a `main` element, or (`main: false`) mixed into the body itself. */
const page = (title: string, text: string, main = true) =>
  `<html><head><title>${title}</title></head><body><header>Acme header banner</header><nav><a href="/">Home navigationword</a></nav>
   ${main ? '<main>' : '<div>'}<h1>${title}</h1><p>${text}</p><h2>Details</h2><p>More about ${title.toLowerCase()}.</p><script>var trackingscript = 1;</script>${main ? '</main>' : '</div>'}
   <aside>Related sidebarword</aside><footer>Copyright footerword</footer></body></html>`;

async function startSite(): Promise<Site> {
  const site: Site = { url: '', requests: [], listed: [], sitemapStatus: 200, pages: new Map() };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const path = req.url ?? '/';
    site.requests.push({ path, ifNoneMatch: req.headers['if-none-match'], ifModifiedSince: req.headers['if-modified-since'] });
    if (path === '/robots.txt') return void res.end('User-agent: *\nDisallow: /private\n');
    if (path === '/sitemap.xml') {
      res.statusCode = site.sitemapStatus;
      return void res.end(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${site.listed.map((p) => `<url><loc>${site.url}${p}</loc></url>`).join('')}</urlset>`,
      );
    }
    const p = site.pages.get(path);
    if (!p || p.status === 404) {
      res.statusCode = 404;
      return void res.end('not found');
    }
    if ((p.etag && req.headers['if-none-match'] === p.etag) || (p.lastModified && req.headers['if-modified-since'] === p.lastModified)) {
      res.statusCode = 304;
      return void res.end();
    }
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (p.etag) res.setHeader('etag', p.etag);
    if (p.lastModified) res.setHeader('last-modified', p.lastModified);
    res.end(p.html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  site.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  open.push({ close: () => new Promise((r) => server.close(r)) });
  return site;
}

async function setup(site: Site) {
  const store: TestStore = await openTestStore();
  open.push(store);
  const clock = createManualClock(1_000_000);
  const knowledge = createKnowledge({ store: store.knowledge, clock });
  const sync: KnowledgeSync = createKnowledgeSync({
    knowledge,
    sources: [{ sitemap: `${site.url}/sitemap.xml` }],
    everyMs: DAY,
    fetch: { timeoutMs: 5000, maxBytes: 64 * 1024, userAgent: 'ParleyBot' },
    clock,
    logger: undefined,
  });
  open.push({ close: () => sync.stop() });
  return { store, clock, knowledge, sync };
}

const until = async (what: string, check: () => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('knowledge sync', () => {
  it('fetches what the sitemap lists on schedule, honours robots.txt, leaves boilerplate out, asks conditionally, removes what is gone', async () => {
    const site = await startSite();
    site.listed = ['/returns', '/shipping', '/private/internal', '/big'];
    site.pages.set('/returns', { html: page('Returns', 'Send items back within thirty days.'), etag: '"r1"' });
    site.pages.set('/shipping', { html: page('Shipping', 'Parcels arrive within five business days.', false), lastModified: 'Tue, 01 Jan 2030 00:00:00 GMT' });
    site.pages.set('/private/internal', { html: page('Internal', 'Staff only secretword.') });
    site.pages.set('/big', { html: page('Big', 'x'.repeat(100 * 1024)) });
    const { store, clock, knowledge, sync } = await setup(site);

    sync.start();
    clock.advance(0);
    await until('the first sync', () => sync.status().last !== undefined);
    const first = sync.status().last!;
    expect(first).toMatchObject({ fetched: 2, unchanged: 0, removed: 0, disallowed: 1 });
    expect(first.failed).toEqual([{ url: `${site.url}/big`, reason: expect.stringContaining('larger than') }]);
    expect(site.requests.some((r) => r.path.startsWith('/private'))).toBe(false);
    expect((await knowledge.search('thirty days return')).map((h) => h.title)[0]).toBe('Returns');
    const returns = await store.knowledge.byUrl(`${site.url}/returns`);
    expect(returns).toMatchObject({ title: 'Returns', format: 'html', origin: `sitemap:${site.url}/sitemap.xml`, etag: '"r1"' });
    for (const word of ['navigationword', 'sidebarword', 'footerword', 'trackingscript', 'banner', 'secretword'])
      expect(await knowledge.search(word), word).toEqual([]);
    expect((await knowledge.search('details shipping'))[0].heading).toBe('Shipping › Details');

    // The schedule: nothing before a day has passed, then a run that asks with the validators it kept.
    site.requests = [];
    clock.advance(DAY - 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(site.requests).toEqual([]);
    clock.advance(1);
    await until('the second sync', () => sync.status().last !== first);
    expect(sync.status().last).toMatchObject({ fetched: 0, unchanged: 2, removed: 0 });
    expect(site.requests.find((r) => r.path === '/returns')?.ifNoneMatch).toBe('"r1"');
    expect(site.requests.find((r) => r.path === '/shipping')?.ifModifiedSince).toBe('Tue, 01 Jan 2030 00:00:00 GMT');

    // On demand: a page no longer listed is removed; a changed page is fetched again.
    site.listed = ['/returns'];
    site.pages.set('/returns', { html: page('Returns', 'Send items back within sixty days.'), etag: '"r2"' });
    expect(await sync.runNow()).toMatchObject({ fetched: 1, removed: 1 });
    expect(await store.knowledge.byUrl(`${site.url}/shipping`)).toBeUndefined();
    expect((await knowledge.search('sixty'))[0].title).toBe('Returns');
    expect(await knowledge.search('thirty')).toEqual([]);

    // A sitemap that cannot be read removes nothing; a page answering 404 is removed.
    site.sitemapStatus = 500;
    expect(await sync.runNow()).toMatchObject({ removed: 0, failed: [{ reason: 'the sitemap could not be read' }] });
    expect(await store.knowledge.byUrl(`${site.url}/returns`)).toBeDefined();
    site.sitemapStatus = 200;
    site.pages.set('/returns', { status: 404, html: '' });
    expect(await sync.runNow()).toMatchObject({ removed: 1 });
    expect(await store.knowledge.count()).toEqual({ articles: 0, chunks: 0 });
  });
});
