// What a knowledge source lists: a sitemap's pages (a sitemap index followed two levels down), or a list of URLs;
// and robots.txt, fetched once per site per sync (unreachable or missing: everything allowed, as crawlers do).
import { XMLParser } from 'fast-xml-parser';
import robotsModule from 'robots-parser';
import { fetchPage, type FetchOptions } from './fetcher.ts';

export type SourceConfig = { sitemap: string } | { urls: string[] };

// A CommonJS module whose types declare an ES default export: at run time the default import is the function.
const robotsParser = robotsModule as unknown as typeof robotsModule.default;

const xml = new XMLParser({ ignoreAttributes: true, isArray: (name) => name === 'url' || name === 'sitemap' });

const locs = (entries: unknown): string[] =>
  (Array.isArray(entries) ? entries : [])
    .map((e) => (e as { loc?: unknown }).loc)
    .filter((l): l is string => typeof l === 'string')
    .map((l) => l.trim());

/** The page URLs of a sitemap (or sitemap index); undefined when it cannot be read (then nothing is removed). */
export async function sitemapUrls(url: string, fetch: FetchOptions, depth = 0): Promise<string[] | undefined> {
  const r = await fetchPage(url, fetch);
  if (r.kind !== 'ok') return undefined;
  let doc: { urlset?: { url?: unknown }; sitemapindex?: { sitemap?: unknown } };
  try {
    doc = xml.parse(r.body) as typeof doc;
  } catch {
    return undefined;
  }
  if (doc.urlset) return locs(doc.urlset.url);
  if (doc.sitemapindex && depth < 2) {
    const out: string[] = [];
    for (const child of locs(doc.sitemapindex.sitemap)) {
      const urls = await sitemapUrls(child, fetch, depth + 1);
      if (!urls) return undefined;
      out.push(...urls);
    }
    return out;
  }
  return undefined;
}

export type RobotsCheck = (url: string) => Promise<boolean>;

/** `isAllowed(url)` for the configured user agent, with each site's robots.txt fetched once. */
export function robotsCheck(fetch: FetchOptions): RobotsCheck {
  const sites = new Map<string, Promise<(url: string) => boolean>>();
  const load = async (origin: string) => {
    const robotsUrl = `${origin}/robots.txt`;
    const r = await fetchPage(robotsUrl, fetch);
    if (r.kind !== 'ok') return () => true;
    const robots = robotsParser(robotsUrl, r.body);
    return (url: string) => robots.isAllowed(url, fetch.userAgent) !== false;
  };
  return async (url) => {
    const origin = new URL(url).origin;
    let check = sites.get(origin);
    if (!check) sites.set(origin, (check = load(origin)));
    return (await check)(url);
  };
}
