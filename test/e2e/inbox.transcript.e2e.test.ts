// The agent inbox's transcript in real Chromium: the sources the assistant cited from the company's knowledge show
// under its reply (a title with a web address is a link opening a new tab with rel="noopener noreferrer"; one without
// is plain text), and a resolve reads "Resolved by Ada" — after a handoff in place of "Back to the assistant", and on a
// conversation with the assistant too. axe-core finds no violations at 1,280 × 800 and 768 × 1,024.
// Screenshots: test-artifacts/inbox-sources-{1280,768}.png, inbox-resolved-{1280,768}.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PASSWORD } from '../support/agents.ts';
import { axeViolations } from '../support/axe.ts';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { startChromiumParley } from '../support/chromium-parley.ts';
import { namedAgent } from '../support/inbox.ts';
import { corpusArticles } from '../support/knowledge-corpus.ts';
import { TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const DEADLINE = 20_000;
const HELP = 'https://help.example.com/articles/';
const CITED = 'conv_web_cust-cited';

let browser: Browser;
let p: TestParley;
let close = async () => {};
const contexts: BrowserContext[] = [];
const customers: WidgetClient[] = [];
/** What the widget was sent with the cited reply. */
let sources: { n: number; title: string; url?: string }[];

const service = (path: string, body: unknown) =>
  fetch(`${p.url()}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  const started = await startChromiumParley();
  ({ browser, parley: p, close } = started);
  const llm = started.llm;
  // One article with its help-centre address, one without.
  for (const a of corpusArticles().filter((x) => ['returns-policy', 'refund-timing'].includes(x.id))) {
    expect((await service('/api/v1/knowledge/articles', a.id === 'returns-policy' ? Object.assign({ url: `${HELP}${a.id}` }, a) : a)).status).toBe(201);
  }
  await namedAgent(p, 'Ada');
  // A customer whose question the assistant answers from the knowledge base, citing every result, then handed over.
  llm.script({ toolCalls: [{ name: 'search_knowledge', args: { query: 'return an item refund money back days' } }] }, (body) => {
    const tool = [...body.messages].reverse().find((m: { role: string }) => m.role === 'tool');
    const results = JSON.parse(tool.content).results as { n: number }[];
    return { text: `You have 30 days to return it; the refund follows ${results.map((r) => `[${r.n}]`).join(' ')}.` };
  });
  llm.fallback({ text: 'Hello! How can I help?' });
  const w = await startWidgetSession(p.url(), { customerId: 'cust-cited', email: 'cited@example.com' });
  customers.push(w);
  w.send({ type: 'message', id: 'm1', text: 'How long do I have to return something, and when is my money back?' });
  sources = (await w.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE)).sources;
  expect(sources.map((s) => s.url)).toEqual(expect.arrayContaining([`${HELP}returns-policy`, undefined]));
  expect((await service(`/conversations/${CITED}/handoff`, { reason: 'refund question' })).status).toBe(200);
  // A customer with the assistant only (nobody asked for a person).
  const plain = await startWidgetSession(p.url(), { customerId: 'cust-plain', email: 'plain@example.com' });
  customers.push(plain);
  plain.send({ type: 'message', id: 'm1', text: 'hello' });
  await plain.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE);
}, 90_000);

afterAll(async () => {
  for (const w of customers) w.close();
  for (const c of contexts) await c.close().catch(() => undefined);
  await close();
});

async function signedIn(width: number, height: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${p.url()}/inbox`);
  await page.locator('[data-testid=email-input]').fill('ada@example.com');
  await page.locator('[data-testid=password-input]').fill(PASSWORD);
  await page.locator('[data-testid=password-input]').press('Enter');
  await expect.poll(() => page.locator('[data-testid=live-state]').textContent(), { timeout: DEADLINE }).toBe('Live');
  return page;
}

async function shot(page: Page, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
  expect(await axeViolations(page)).toEqual([]);
}

/** The sources shown under the assistant's reply: number, title, and the link's address, target and rel. */
const shownSources = (page: Page) =>
  page.locator('[data-testid=transcript] [data-kind=assistant] [data-testid=source]').evaluateAll((rows) =>
    rows.map((li) => {
      const a = li.querySelector('a');
      return { n: Number(li.getAttribute('value')), title: li.textContent, url: a?.getAttribute('href'), target: a?.target, rel: a?.rel };
    }),
  );

describe("the inbox's transcript (Chromium)", () => {
  it('shows what the assistant cited under its reply, linked when it has a web address', async () => {
    for (const [width, height] of [
      [1280, 800],
      [768, 1024],
    ]) {
      const page = await signedIn(width, height);
      await withScreenshotOnFailure(page, `inbox-sources-${width}`, async () => {
        await page.locator(`[data-testid=conversation-item][data-id="${CITED}"]`).click({ timeout: DEADLINE });
        const expected = sources.map((s) =>
          s.url
            ? { n: s.n, title: s.title, url: s.url, target: '_blank', rel: 'noopener noreferrer' }
            : { n: s.n, title: s.title, url: undefined, target: undefined, rel: undefined },
        );
        await expect.poll(() => shownSources(page), { timeout: DEADLINE }).toEqual(expected);
        // Quietly: smaller and dimmer than the reply it belongs to.
        const [list, text] = await Promise.all(
          ['[data-kind=assistant] [data-testid=sources]', '[data-kind=assistant] > p'].map((s) =>
            page
              .locator(s)
              .first()
              .evaluate((e) => ({ size: parseFloat(getComputedStyle(e).fontSize), color: getComputedStyle(e).color })),
          ),
        );
        expect(list.size).toBeLessThan(text.size);
        expect(list.color).not.toBe(text.color);
        await page.locator('[data-testid=sources]').first().scrollIntoViewIfNeeded();
        await shot(page, `inbox-sources-${width}`);
      });
    }
  });

  it('a resolve reads "Resolved by Ada": in place of the release after a handoff, and on a conversation with the assistant', async () => {
    const page = await signedIn(1280, 800);
    await withScreenshotOnFailure(page, 'inbox-resolved-1280', async () => {
      await page.locator(`[data-testid=conversation-item][data-id="${CITED}"]`).click({ timeout: DEADLINE });
      await page.locator('[data-testid=claim]').click({ timeout: DEADLINE });
      await page.locator('[data-testid=resolve]').click({ timeout: DEADLINE });
      const transcript = page.locator('[data-testid=transcript]');
      await expect
        .poll(() => transcript.locator('[data-kind=resolved]').allTextContents(), { timeout: DEADLINE })
        .toEqual([expect.stringMatching(/^Resolved by Ada: back to the assistant/)]);
      expect(await transcript.locator('[data-kind=handoff]').allTextContents()).toEqual([expect.stringMatching(/^Handed to a person: refund question/)]);
      expect(await transcript.locator('li[data-kind]').last().getAttribute('data-kind')).toBe('resolved');
      await shot(page, 'inbox-resolved-1280');

      // With the assistant: found by search, resolved — the transcript says so, at the end.
      await page.locator('[data-testid=search]').fill('plain@example.com');
      await page.locator('[data-testid=conversation-item][data-id=conv_web_cust-plain]').click({ timeout: DEADLINE });
      await page.locator('[data-testid=resolve]').click({ timeout: DEADLINE });
      await expect
        .poll(() => transcript.locator('li[data-kind]').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-kind'), r.textContent])), {
          timeout: DEADLINE,
        })
        .toEqual([
          ['customer', expect.stringContaining('hello')],
          ['assistant', expect.stringContaining('How can I help?')],
          ['resolved', expect.stringMatching(/^Resolved by Ada\d/)],
        ]);
      await page.setViewportSize({ width: 768, height: 1024 });
      await shot(page, 'inbox-resolved-768');
    });
  });
});
