// The "Knowledge" card (issue 36): how many questions the knowledge base was asked, the questions that found nothing
// (content gaps: write these articles next) and the articles most used (cited by a reply, retrieved by a search).
// Read from GET /api/v1/telemetry/knowledge for the header's time window.
import type { KnowledgeInsights } from '../../src/telemetry/knowledge-insights.ts';
import { api } from './api.ts';
import { fmtAgo, fmtTime, h } from './dom.ts';

const table = (testId: string, label: string, head: string[], rows: HTMLElement[], empty: string) =>
  h(
    'div',
    { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `${label} (scrolls)` },
    h(
      'table',
      { 'data-testid': testId },
      h('thead', {}, h('tr', {}, ...head.map((x) => h('th', {}, x)))),
      h('tbody', {}, ...(rows.length ? rows : [h('tr', {}, h('td', { colspan: String(head.length), class: 'empty' }, empty))])),
    ),
  );

export function renderKnowledge(card: HTMLElement, k: KnowledgeInsights, now: number) {
  const gaps = k.gaps.map((g) =>
    h(
      'tr',
      { 'data-testid': 'knowledge-gap-row' },
      g.query
        ? h('td', { title: g.query }, g.query)
        : h('td', { class: 'empty', title: `query hash ${g.queryHash}` }, `text not kept (#${g.queryHash.slice(0, 8)})`),
      h('td', {}, String(g.count)),
      h('td', { title: fmtTime(g.lastAt) }, fmtAgo(g.lastAt, now)),
    ),
  );
  const articles = k.articles.map((a) =>
    h(
      'tr',
      { 'data-testid': 'knowledge-article-row' },
      h('td', { title: a.articleId }, a.title ?? `${a.articleId} (deleted)`),
      h('td', {}, String(a.cited)),
      h('td', {}, String(a.retrieved)),
    ),
  );
  card.replaceChildren(
    h('h2', {}, 'Knowledge'),
    h(
      'p',
      { class: 'knowledge-counts', 'data-testid': 'knowledge-counts' },
      `${k.searches} searches${k.truncated ? '+' : ''} · ${k.unanswered} found nothing · ${k.cited} answered with a source`,
    ),
    h('h3', {}, 'Questions that found nothing'),
    table('knowledge-gaps', 'Questions that found nothing', ['Question', 'Times', 'Last asked'], gaps, 'No unanswered questions.'),
    h('h3', {}, 'Most used articles'),
    table('knowledge-articles', 'Most used articles', ['Article', 'Cited', 'Retrieved'], articles, 'No article used yet.'),
  );
}

/** The card, and its refresh for the window of the summary's query (`since=…&until=…`). */
export function createKnowledgeCard() {
  const card = h('section', { class: 'card knowledge', 'aria-label': 'Knowledge base', 'data-testid': 'knowledge-card' });
  return {
    card,
    async refresh(summaryQuery: string, now: number) {
      const q = new URLSearchParams(summaryQuery);
      const window = new URLSearchParams();
      for (const key of ['since', 'until']) if (q.get(key)) window.set(key, q.get(key)!);
      try {
        renderKnowledge(card, await api<KnowledgeInsights>(`/api/v1/telemetry/knowledge?${window}`), now);
      } catch (err) {
        card.replaceChildren(h('h2', {}, 'Knowledge'), h('p', { class: 'error' }, `Could not read the knowledge figures: ${(err as Error).message}`));
      }
    },
  };
}
