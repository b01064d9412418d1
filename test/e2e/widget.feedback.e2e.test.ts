// The feedback controls as a customer meets them, in real Chromium on a phone (360 px) and a desktop: after "Yes" to
// "Did that answer your question?", the rating card's five scores share the card's width (each a comfortable tap
// target), the comment box and "Send rating" are as wide as the scores, and the comment is 16 px (a phone does not zoom
// into it); the scores are one radio group (one Tab stop, arrow keys choose); once sent, "Thank you for your rating!"
// shows until the next message, not under every later answer. The card is a <form> like the input bar; it must not
// take the input bar's layout (it once did: the scores shrank to 30 px at the card's right edge). axe-core finds no
// violations. Screenshots: test-artifacts/widget-rating-{phone,desktop}.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { axeViolations } from '../support/axe.ts';

const demo = useDemoParley({ outcomes: { csat: true } }, 60_000);
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

/** The rating card's parts, as boxes (rounded to whole pixels). */
const layout = (page: Page) =>
  page.evaluate(() => {
    const root = document.querySelector('#parley-widget')!.shadowRoot!;
    const card = root.querySelector<HTMLElement>('[data-testid=rating]')!;
    const box = (e: Element) => {
      const b = e.getBoundingClientRect();
      return { left: Math.round(b.left), right: Math.round(b.right), width: Math.round(b.width) };
    };
    const cs = getComputedStyle(card);
    const inner = { left: Math.round(card.getBoundingClientRect().left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft)) };
    const comment = card.querySelector('[data-testid=rating-comment]')!;
    return {
      inner,
      scores: box(card.querySelector('.scores')!),
      narrowestScore: Math.min(...[...card.querySelectorAll('[data-score]')].map((b) => box(b).width)),
      comment: box(comment),
      send: box(card.querySelector('[data-testid=rating-send]')!),
      commentFontSize: getComputedStyle(comment).fontSize,
    };
  });

const VIEWS: [string, BrowserContextOptions][] = [
  ['phone', { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true }],
  ['desktop', { viewport: { width: 1280, height: 800 } }],
];

describe('the rating card (Chromium)', () => {
  for (const [name, options] of VIEWS) {
    it(`${name}: the scores, the comment and Send fill the card; the comment is 16 px; no axe violations; arrow keys choose; the thanks does not stay`, async () => {
      const context = await demo.browser.newContext({ ...options, locale: 'en-US' });
      const page = await context.newPage();
      await withScreenshotOnFailure(page, `widget-rating-${name}`, async () => {
        await page.goto(`${demo.parley.url()}/demo.html`);
        await page.locator('[data-testid=launcher]').click();
        await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
        await page.locator('[data-testid=input]').fill('What is the status of order 1001?');
        await page.locator('[data-testid=input]').press('Enter');
        await page.locator('[data-testid=resolution-yes]').click({ timeout: 30_000 });
        await page.locator('[data-testid=rating]').waitFor({ timeout: 30_000 });

        const l = await layout(page);
        // The scores start at the card's content edge and the comment and Send line up with them, as wide.
        expect(l.scores.left).toBe(l.inner.left);
        expect(l.comment).toEqual(l.scores);
        expect(l.send).toEqual(l.scores);
        expect(l.scores.width).toBeGreaterThan(250);
        expect(l.narrowestScore).toBeGreaterThanOrEqual(44);
        expect(l.commentFontSize).toBe('16px');
        expect(await axeViolations(page, '#parley-widget')).toEqual([]);
        await page.screenshot({ path: join(ARTIFACTS, `widget-rating-${name}.png`) });

        // The scores are one radio group: one Tab stop, arrow keys move and choose.
        const focused = () =>
          page.evaluate(() => {
            const a = document.querySelector('#parley-widget')!.shadowRoot!.activeElement as HTMLElement | null;
            return a?.dataset.score ?? a?.dataset.testid ?? 'none';
          });
        await page.locator('[data-testid=rating-comment]').focus();
        await page.keyboard.press('Shift+Tab');
        expect(await focused()).toBe('1');
        for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
        expect(await focused()).toBe('4');
        expect(await page.locator('[data-testid=rating] [aria-checked=true]').getAttribute('data-score')).toBe('4');
        expect(await page.locator('[data-testid=rating-send]').isEnabled()).toBe(true);
        await page.keyboard.press('Tab');
        expect(await focused()).toBe('rating-comment');
        await page.keyboard.press('Shift+Tab');
        expect(await focused()).toBe('4');
        await page.keyboard.press('Shift+Tab');
        expect(['1', '2', '3', '5']).not.toContain(await focused());

        // Sent: thanked once, under the conversation as it was; the thanks is not pinned under the answers that follow.
        await page.locator('[data-testid=rating] [data-score="4"]').click();
        await page.locator('[data-testid=rating-send]').click();
        const thanks = page.locator('[data-testid=rating-thanks]');
        await expect.poll(() => thanks.isVisible(), { timeout: 15_000 }).toBe(true);
        expect(await page.locator('[data-testid=rating]').isVisible()).toBe(false);
        await page.locator('[data-testid=input]').fill('What is the status of order 1002?');
        await page.locator('[data-testid=input]').press('Enter');
        await expect.poll(() => page.locator('[data-testid=message][data-role=assistant]').count(), { timeout: 30_000 }).toBe(2);
        expect(await thanks.isVisible()).toBe(false);
      });
      await context.close();
    }, 90_000);
  }
});
