// The widget on the narrowest phones (320 px), in real Chromium: the header's title and subtitle are read whole beside
// the status pill and ×, in English and Spanish (they were cut to "Typically replies in min…" and "Suele responder
// en …"), nothing in the header overlaps, a long pasted link does not make the log scroll sideways, and the Yes and No
// of "Did that answer your question?" stay on one line. axe-core finds
// no violations. Screenshots: test-artifacts/widget-320-{en,es}.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { restartDemoWidget } from '../support/demo-widget.ts';
import { axeViolations } from '../support/axe.ts';

const demo = useDemoParley({}, 60_000);
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

/** The header's parts: whether each text is cut, and their left/right edges. */
const header = (page: Page) =>
  page.evaluate(() => {
    const root = document.querySelector('#parley-widget')!.shadowRoot!;
    const part = (sel: string) => {
      const e = root.querySelector<HTMLElement>(sel)!;
      const b = e.getBoundingClientRect();
      return { text: e.textContent, cut: e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1, left: b.left, right: b.right };
    };
    return { title: part('[data-testid=title]'), subtitle: part('[data-testid=subtitle]'), status: part('.status'), close: part('.close') };
  });

async function widget(page: Page, options: Record<string, unknown>) {
  await page.goto(`${demo.parley.url()}/demo.html`);
  await restartDemoWidget(page, Object.assign({ open: true }, options));
  await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
}

const CASES: [string, Record<string, unknown>, string][] = [
  ['en', {}, 'Typically replies in minutes'],
  ['es', { locale: 'es' }, 'Suele responder en minutos'],
];

describe('the widget at 320 px (Chromium)', () => {
  for (const [name, options, subtitle] of CASES) {
    it(`${name}: the title and "${subtitle}" are whole beside the pill; nothing overlaps; the log does not scroll sideways`, async () => {
      const context = await demo.browser.newContext({ viewport: { width: 320, height: 600 }, isMobile: true, hasTouch: true });
      const page = await context.newPage();
      await withScreenshotOnFailure(page, `widget-320-${name}`, async () => {
        await widget(page, options);
        const h = await header(page);
        expect(h.subtitle).toMatchObject({ text: subtitle, cut: false });
        expect(h.title.cut).toBe(false);
        expect(h.subtitle.right).toBeLessThanOrEqual(h.status.left);
        expect(h.status.right).toBeLessThanOrEqual(h.close.left);

        await page
          .locator('[data-testid=input]')
          .fill('See https://example.com/orders/1001/tracking/details/with/a/long/path/and?query=string-that-never-breaks');
        await page.locator('[data-testid=input]').press('Enter');
        await page.locator('[data-testid=message][data-role=assistant]').first().waitFor({ timeout: 30_000 });
        // "Did that answer your question?": Yes and No on one line (No was once alone on the next line in Spanish).
        const chipTops = await Promise.all(['yes', 'no'].map(async (c) => (await page.locator(`[data-testid=resolution-${c}]`).boundingBox())!.y));
        expect(chipTops[1]).toBe(chipTops[0]);
        const log = await page.locator('[data-testid=messages]').evaluate((e) => ({ sideways: e.scrollWidth - e.clientWidth }));
        expect(log).toEqual({ sideways: 0 });
        expect(await axeViolations(page, '#parley-widget')).toEqual([]);
        await page.screenshot({ path: join(ARTIFACTS, `widget-320-${name}.png`) });
      });
      await context.close();
    }, 90_000);
  }
});
