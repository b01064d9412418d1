// Keeps the synced sources' pages in the knowledge base: on a schedule (`knowledge.every`) and on demand. Each page is
// fetched with its validators (ETag / Last-Modified: unchanged pages cost a 304), skipped when robots.txt disallows
// it, turned from HTML into text without its boilerplate, and removed when its source no longer lists it (or it
// answers 404/410). A source that cannot be read (sitemap down) removes nothing.
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { storableText } from '../http/storable-text.ts';
import { fetchPage, type FetchOptions } from './fetcher.ts';
import { htmlToSections } from './html.ts';
import type { Knowledge } from './service.ts';
import { robotsCheck, sitemapUrls, type RobotsCheck, type SourceConfig } from './sources.ts';

export interface SyncReport {
  startedAt: number;
  finishedAt: number;
  sources: number;
  fetched: number;
  unchanged: number;
  removed: number;
  disallowed: number;
  failed: { url: string; reason: string }[];
}

export interface KnowledgeSync {
  /** Runs a sync now (or joins the one running) and resolves with its report. */
  runNow(): Promise<SyncReport>;
  status(): { running: boolean; nextAt?: number; last?: SyncReport };
  /** Runs at once, then every `everyMs`. Does nothing without sources. */
  start(): void;
  stop(): Promise<void>;
}

/** `24h` → ms. */
export function parseEvery(every: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(every.trim());
  if (!m) throw new Error(`not a duration: ${every}`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

const originOf = (source: SourceConfig) => ('sitemap' in source ? `sitemap:${source.sitemap}` : 'urls');

const titleFromUrl = (url: string) => storableText(decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? url).replace(/[-_]+/g, ' '));

export function createKnowledgeSync(o: {
  knowledge: Knowledge;
  sources: SourceConfig[];
  everyMs: number;
  fetch: FetchOptions;
  clock: Clock;
  logger?: Logger;
}): KnowledgeSync {
  const { knowledge, clock } = o;
  const log = o.logger?.child({ component: 'knowledge-sync' });
  let running: Promise<SyncReport> | undefined;
  let last: SyncReport | undefined;
  let timer: TimerHandle | undefined;
  let nextAt: number | undefined;
  let stopped = false;

  async function syncPage(url: string, origin: string, allowed: RobotsCheck, report: SyncReport) {
    if (!(await allowed(url))) {
      report.disallowed++;
      return false;
    }
    const existing = await knowledge.store.byUrl(url);
    const validators = existing ? { etag: existing.etag, lastModified: existing.lastModified } : {};
    const r = await fetchPage(url, o.fetch, validators);
    if (r.kind === 'not_modified') report.unchanged++;
    else if (r.kind === 'gone') return false;
    else if (r.kind === 'failed') report.failed.push({ url, reason: r.reason });
    else {
      // A page's NUL is kept as U+FFFD: no store keeps U+0000 (storable-text.ts).
      const body = storableText(r.body);
      const html = /html|xml/i.test(r.contentType) || /^\s*</.test(body);
      const title = (html ? htmlToSections(body).title : undefined) ?? titleFromUrl(url);
      await knowledge.upsert({ id: existing?.id, url, title, body, format: html ? 'html' : 'text' }, { origin, etag: r.etag, lastModified: r.lastModified });
      report.fetched++;
    }
    return true;
  }

  async function syncAll(): Promise<SyncReport> {
    const report: SyncReport = {
      startedAt: clock.now(),
      finishedAt: 0,
      sources: o.sources.length,
      fetched: 0,
      unchanged: 0,
      removed: 0,
      disallowed: 0,
      failed: [],
    };
    const allowed = robotsCheck(o.fetch);
    // Listed URLs per origin: a source that could not be read leaves its origin out (nothing of it is removed).
    const listed = new Map<string, Set<string>>();
    for (const source of o.sources) {
      const origin = originOf(source);
      const urls = 'sitemap' in source ? await sitemapUrls(source.sitemap, o.fetch) : source.urls;
      if (!urls) {
        report.failed.push({ url: 'sitemap' in source ? source.sitemap : '', reason: 'the sitemap could not be read' });
        listed.set(origin, new Set()); // marks the origin as unreadable below
        listed.get(origin)!.add('\u0000unreadable');
        continue;
      }
      const keep = listed.get(origin) ?? new Set<string>();
      listed.set(origin, keep);
      for (const url of new Set(urls)) if (await syncPage(url, origin, allowed, report)) keep.add(url);
    }
    for (const [origin, keep] of listed) {
      if (keep.has('\u0000unreadable')) continue;
      for (const ref of await knowledge.store.byOrigin(origin)) {
        if (ref.url && keep.has(ref.url)) continue;
        if (await knowledge.remove(ref.id)) report.removed++;
      }
    }
    report.finishedAt = clock.now();
    return report;
  }

  const runNow = () => {
    running ??= syncAll()
      .then((report) => {
        last = report;
        log?.info({ fetched: report.fetched, unchanged: report.unchanged, removed: report.removed, failed: report.failed.length }, 'knowledge sources synced');
        return report;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const schedule = (ms: number) => {
    if (stopped) return;
    nextAt = clock.now() + ms;
    timer = clock.setTimeout(() => {
      timer = undefined;
      void runNow()
        .catch((err: unknown) => log?.warn({ err }, 'knowledge sync failed'))
        .finally(() => schedule(o.everyMs));
    }, ms);
  };

  return {
    runNow,
    status: () => ({ running: running !== undefined, nextAt, last }),
    start() {
      if (o.sources.length > 0 && !timer) schedule(0);
    },
    async stop() {
      stopped = true;
      clock.clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
