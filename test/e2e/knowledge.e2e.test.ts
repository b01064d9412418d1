// Issue 36, parts 3 and 4 in real Chromium: a cited reply shows numbered chips where the text cites and a "Sources"
// list under it (titles linking to the articles, in a new tab, rel=noopener); the made-up citation shows no chip; a
// reload keeps them. The dashboard's Knowledge card lists the question that found nothing and the article cited, and
// axe-core finds no violations on the page. Screenshots: test-artifacts/widget-sources.png (and -phone), dashboard-knowledge.png.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useChromiumParley } from '../support/chromium-parley.ts';
import { corpusArticles } from '../support/knowledge-corpus.ts';
import { TEST_SECRET } from '../support/parley.ts';
import { axeViolations } from '../support/axe.ts';

const HELP = 'https://help.example.com/articles/';

const e2e = useChromiumParley(
  {
    demo: { backend: true },
    identity: { allow_anonymous: false },
    telemetry: { store_text: true },
  },
  60_000,
);

beforeAll(async () => {
  for (const a of corpusArticles()) {
    const res = await fetch(`${e2e.parley.url()}/api/v1/knowledge/articles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify(Object.assign({ url: `${HELP}${a.id}` }, a)),
    });
    expect(res.status).toBe(201);
  }
}, 60_000);

const shadow = (page: Page) => page.locator('#parley-widget');

/** The numbers, titles and links the widget shows for the last assistant message. */
const shown = (page: Page) =>
  page.evaluate(() => {
    const root = document.querySelector('#parley-widget')!.shadowRoot!;
    const rows = root.querySelectorAll('[data-testid=message][data-role=assistant]');
    const last = rows[rows.length - 1];
    return {
      text: last.querySelector('.md')!.textContent,
      chips: [...last.querySelectorAll('[data-testid=source-chip]')].map((c) => ({
        n: c.textContent,
        href: c.getAttribute('href'),
        label: c.getAttribute('aria-label'),
      })),
      heading: last.querySelector('.sources-title')?.textContent,
      sources: [...last.querySelectorAll('[data-testid=source]')].map((li) => {
        const a = li.querySelector('a');
        return {
          n: li.getAttribute('value'),
          title: li.textContent,
          href: a?.getAttribute('href'),
          target: a?.getAttribute('target'),
          rel: a?.getAttribute('rel'),
        };
      }),
    };
  });

describe('sources in the widget and knowledge on the dashboard (Chromium)', () => {
  it('chips and a Sources list for the real citations only, kept on reload; the dashboard shows the gap and the article', async () => {
    const page = await e2e.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await withScreenshotOnFailure(page, 'widget-sources', async () => {
      await page.goto(`${e2e.parley.url()}/demo.html`);
      await shadow(page).locator('[data-testid=launcher]').click();
      await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
      e2e.llm.script({ toolCalls: [{ name: 'search_knowledge', args: { query: 'return item days refund money back' } }] }, (body) => {
        const tool = [...body.messages].reverse().find((m: { role: string }) => m.role === 'tool');
        const results = JSON.parse(tool.content).results as { n: number; chunk: string }[];
        const other = results.find((r) => !r.chunk.startsWith(results[0].chunk.split('#')[0]));
        return {
          text: `You can send it back within **30 days** [1]. ${other ? `Refunds follow [${other.n}]. ` : ''}A free gift comes too [7].`,
        };
      });
      const input = page.locator('[data-testid=input]');
      await input.fill('How many days do I have to send something back, and when do I get my money?');
      await input.press('Enter');
      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 30_000 }).toBe(1);
      await expect.poll(async () => (await shown(page)).sources.length, { timeout: 15_000 }).toBeGreaterThan(0);
      await expect.poll(() => shadow(page).locator('[data-testid=resolution]').isVisible(), { timeout: 15_000 }).toBe(true);
      const s = await shown(page);
      expect(s.heading).toBe('Sources');
      expect(s.text).not.toContain('[7]');
      expect(s.text).not.toContain('[1]');
      expect(s.chips.map((c) => c.n)).toEqual(s.sources.map((x) => x.n));
      expect(s.sources[0]).toMatchObject({ n: '1', href: `${HELP}returns-policy`, target: '_blank', rel: 'noopener noreferrer' });
      expect(s.chips[0]).toMatchObject({ n: '1', href: `${HELP}returns-policy` });
      expect(s.chips[0].label).toMatch(/^Source 1: /);
      await page.screenshot({ path: join(ARTIFACTS, 'widget-sources.png') });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(ARTIFACTS, 'widget-sources-phone.png') });
      await page.setViewportSize({ width: 1280, height: 900 });

      // A chip opens its article in a new tab (the network is not reached: the route is stubbed).
      await page.context().route(`${HELP}**`, (r) => r.fulfill({ status: 200, contentType: 'text/plain', body: 'article' }));
      const [tab] = await Promise.all([page.context().waitForEvent('page'), shadow(page).locator('[data-testid=source-chip]').first().click()]);
      await tab.waitForLoadState();
      expect(tab.url()).toBe(`${HELP}returns-policy`);
      await tab.close();

      // The history keeps them: a reload shows the same chips and list.
      await page.reload();
      await shadow(page).locator('[data-testid=launcher]').click();
      await expect.poll(async () => (await shown(page)).sources.length, { timeout: 15_000 }).toBe(s.sources.length);
      expect(await shown(page)).toEqual(s);

      // A question the corpus cannot answer: "I don't know", and it is a content gap on the dashboard.
      e2e.llm.script({ toolCalls: [{ name: 'search_knowledge', args: { query: 'capital of France' } }] }, { text: 'Paris [1].' });
      await input.fill('What is the capital of France?');
      await input.press('Enter');
      await expect.poll(() => assistant.count(), { timeout: 30_000 }).toBe(2);
      expect((await shown(page)).text).toMatch(/I don't know/);
      // It is no answer: "Did that answer your question?" is not asked under it (it was under the answer before).
      expect(await shadow(page).locator('[data-testid=resolution]').isHidden()).toBe(true);
    });

    const dash = await e2e.browser.newPage({ viewport: { width: 1440, height: 1400 } });
    await withScreenshotOnFailure(dash, 'dashboard-knowledge', async () => {
      await dash.goto(`${e2e.parley.url()}/telemetry`);
      await dash.evaluate((secret) => sessionStorage.setItem('parley.secret', secret), TEST_SECRET);
      await dash.reload();
      const gaps = dash.locator('[data-testid=knowledge-gap-row]');
      await expect.poll(() => gaps.count(), { timeout: 20_000 }).toBe(1);
      expect(await gaps.first().locator('td').first().textContent()).toBe('capital of France');
      const articles = dash.locator('[data-testid=knowledge-article-row]');
      const rows = await Promise.all((await articles.all()).map((r) => r.locator('td').allTextContents()));
      expect(rows).toContainEqual(['Returns policy', '1', '1']);
      // Every article the search found is listed; the cited ones first.
      expect(rows.map((r) => r[1])).toEqual([...rows.map((r) => r[1])].sort().reverse());
      expect(await dash.locator('[data-testid=knowledge-counts]').textContent()).toBe('2 searches · 1 found nothing · 1 answered with a source');
      await dash.locator('[data-testid=knowledge-card]').screenshot({ path: join(ARTIFACTS, 'dashboard-knowledge.png') });
      expect(await axeViolations(dash)).toEqual([]);
    });
  });
});
