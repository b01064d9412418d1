// What the knowledge base does for operators (issue 36, part 4), from the `knowledge.search` events of a window: the
// questions that found nothing (content gaps: grouped by their query's hash, with the text when `telemetry.store_text`
// kept it) and the articles most used (retrieved by a search, and cited by the reply). The dashboard's "Knowledge"
// card reads it from GET /api/v1/telemetry/knowledge.
import type { TelemetryEvent } from '../store/telemetry-records.ts';
import type { TelemetryStore } from '../store/repos.ts';

export const KNOWLEDGE_SEARCH_EVENT = 'knowledge.search';
/** The most recent searches read for one answer. */
export const MAX_SEARCHES_READ = 10_000;

export interface KnowledgeInsights {
  searches: number;
  /** Searches that found nothing relevant. */
  unanswered: number;
  /** Searches with at least one hit the reply cited. */
  cited: number;
  gaps: { queryHash: string; query?: string; count: number; lastAt: number }[];
  articles: { articleId: string; title?: string; cited: number; retrieved: number }[];
  /** True when the window held more searches than were read (the most recent MAX_SEARCHES_READ were). */
  truncated: boolean;
}

interface SearchData {
  queryHash?: unknown;
  query?: unknown;
  found?: unknown;
  hits?: { articleId?: unknown; cited?: unknown }[];
}

/** Pure: the insights of these events (any order), the top `limit` gaps and articles. */
export function knowledgeInsights(events: TelemetryEvent[], limit: number): Omit<KnowledgeInsights, 'truncated'> {
  const gaps = new Map<string, { queryHash: string; query?: string; count: number; lastAt: number }>();
  const articles = new Map<string, { articleId: string; cited: number; retrieved: number }>();
  let unanswered = 0;
  let cited = 0;
  for (const e of events) {
    const d = e.data as SearchData;
    const hits = Array.isArray(d.hits) ? d.hits : [];
    if (d.found === false || hits.length === 0) {
      unanswered++;
      const hash = typeof d.queryHash === 'string' ? d.queryHash : 'unknown';
      const gap = gaps.get(hash) ?? { queryHash: hash, count: 0, lastAt: 0 };
      gap.count++;
      if (e.at >= gap.lastAt) {
        gap.lastAt = e.at;
        if (typeof d.query === 'string') gap.query = d.query;
      }
      gaps.set(hash, gap);
      continue;
    }
    const seen = new Map<string, boolean>();
    for (const h of hits) {
      if (typeof h.articleId !== 'string') continue;
      seen.set(h.articleId, (seen.get(h.articleId) ?? false) || h.cited === true);
    }
    if ([...seen.values()].some(Boolean)) cited++;
    for (const [articleId, wasCited] of seen) {
      const a = articles.get(articleId) ?? { articleId, cited: 0, retrieved: 0 };
      a.retrieved++;
      if (wasCited) a.cited++;
      articles.set(articleId, a);
    }
  }
  return {
    searches: events.length,
    unanswered,
    cited,
    gaps: [...gaps.values()].sort((a, b) => b.count - a.count || b.lastAt - a.lastAt).slice(0, limit),
    articles: [...articles.values()].sort((a, b) => b.cited - a.cited || b.retrieved - a.retrieved || a.articleId.localeCompare(b.articleId)).slice(0, limit),
  };
}

/** Reads the window's searches (the most recent first, up to MAX_SEARCHES_READ) and names the articles. */
export async function readKnowledgeInsights(
  store: TelemetryStore,
  o: { since: number; until: number; limit: number; titleOf: (articleId: string) => Promise<string | undefined> },
): Promise<KnowledgeInsights> {
  const events: TelemetryEvent[] = [];
  let cursor: string | undefined;
  let truncated = false;
  for (;;) {
    const page = await store.events({ type: KNOWLEDGE_SEARCH_EVENT, since: o.since, until: o.until, limit: 1000, cursor, order: 'desc' });
    events.push(...page.items);
    if (!page.nextCursor) break;
    if (events.length >= MAX_SEARCHES_READ) {
      truncated = true;
      break;
    }
    cursor = page.nextCursor;
  }
  const insights = knowledgeInsights(events, o.limit);
  const articles = await Promise.all(
    insights.articles.map(async (a) => {
      const title = await o.titleOf(a.articleId);
      return title === undefined ? a : Object.assign({}, a, { title });
    }),
  );
  return Object.assign(insights, { articles, truncated });
}
